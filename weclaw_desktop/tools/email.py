"""The email tool: send mail through the user's SMTP account.

host, port, username, sender and the security mode are the tool's config (Settings > Tools > email); the
password is the keyring secret ``email.password`` (the tool is hidden until all of them exist). The
connection is always encrypted unless the user explicitly chose security ``none``:

- ``starttls`` (port 587): plain connect, then STARTTLS; a server that does not offer it is refused
  before the password is sent;
- ``tls`` (port 465, also accepted as ``ssl``): TLS from the first byte.

Certificates are verified against the system store, or against ``ca_file`` when set (a company CA, or a
test server's self-signed certificate). smtplib is blocking: it runs in a worker thread.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import smtplib
import socket
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.toolkit.argkinds import PathStr
from weclaw_desktop.toolkit.base import BaseTool, ToolContext, ToolError, ToolResult, action
from weclaw_desktop.tools.email_message import (
    AddressError,
    Attachment,
    Mailbox,
    build_message,
    load_attachment,
    parse_mailbox,
    parse_mailboxes,
)
from weclaw_desktop.tools.pathguard import resolve_user_path

log = logging.getLogger("weclaw.email")

PASSWORD_SECRET = "email.password"
MB = 1024 * 1024


class EmailConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    host: str = Field(default="", description="SMTP server, e.g. smtp.qq.com or smtp.gmail.com")
    port: int = Field(default=587, ge=1, le=65535, description="587 for starttls, 465 for tls")
    username: str = Field(default="", description="Login name, usually the email address")
    sender: str = Field(default="", description="From address ('' = the username)")
    sender_name: str = Field(default="", description="Display name shown to recipients")
    security: Literal["starttls", "tls", "none"] = Field(
        default="starttls", description="starttls (587), tls (465), or none (unencrypted; only if you must)"
    )
    ca_file: str = Field(default="", description="PEM file of extra CA certificates to trust ('' = system store)")
    timeout_s: float = Field(default=30.0, gt=0, le=600, description="Network timeout per SMTP step")
    max_attachment_mb: float = Field(default=25.0, gt=0, le=200, description="Total size limit of attachments")
    max_recipients: int = Field(default=50, ge=1, le=500, description="Most recipients (to + cc + bcc)")

    @field_validator("security", mode="before")
    @classmethod
    def _aliases(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip().lower()
            return {"ssl": "tls", "implicit": "tls", "plain": "none", "": "starttls"}.get(value, value)
        return value


class SendParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    to: list[str] = Field(
        min_length=1, max_length=100, description="Recipients, e.g. ['bob@example.com', 'Li Lei <li@example.cn>']"
    )
    subject: str = Field(min_length=1, max_length=500, description="Subject line")
    body: str = Field(max_length=500_000, description="Plain-text message body")
    cc: list[str] = Field(default_factory=list, max_length=100, description="Copy recipients")
    bcc: list[str] = Field(default_factory=list, max_length=100, description="Hidden copy recipients")
    html: str = Field(default="", max_length=1_000_000, description="Optional HTML version of the body")
    attachments: list[PathStr] = Field(
        default_factory=list, max_length=20, description="Paths of files to attach (e.g. ~/Documents/report.pdf)"
    )
    reply_to: str = Field(default="", description="Optional Reply-To address")


class EmailSendError(Exception):
    """Sending failed; the message is for the model and the user (never contains the password)."""


@dataclass
class Delivery:
    refused: dict[str, str]


class EmailTool(BaseTool):
    Config = EmailConfig

    def __init__(self, config: BaseModel | None = None, *, name: str | None = None) -> None:
        super().__init__(config, name=name)
        #: Where the password comes from; the app may set its own store (it knows session-only secrets).
        self.secrets: SecretStore = SecretStore()

    @action(
        "Send an email from the user's own account, with optional cc/bcc, HTML and file attachments. "
        "Use it only when the user asked to send mail; confirm recipients and content first. "
        "Attachments are file paths on this computer."
    )
    async def send(self, params: SendParams, ctx: ToolContext) -> ToolResult:
        cfg: EmailConfig = self.config
        if not cfg.host or not cfg.username:
            raise ToolError("Email is not set up: enter the SMTP server and username under Settings > Tools > email.")
        try:
            sender = parse_mailbox(cfg.sender or cfg.username)
            if cfg.sender_name and not sender.name:
                sender = Mailbox(cfg.sender_name, sender.address)
            to = parse_mailboxes(params.to)
            cc = parse_mailboxes(params.cc)
            bcc = parse_mailboxes(params.bcc)
            reply_to = parse_mailbox(params.reply_to) if params.reply_to.strip() else None
        except AddressError as exc:
            raise ToolError(f"Invalid address: {exc}. Nothing was sent.") from None
        if not to:
            raise ToolError("No recipient in 'to'. Nothing was sent.")
        recipients = list(dict.fromkeys(m.address for m in [*to, *cc, *bcc]))
        if len(recipients) > cfg.max_recipients:
            raise ToolError(f"{len(recipients)} recipients is more than the limit of {cfg.max_recipients}.")
        if not params.subject.strip():
            raise ToolError("The subject is empty. Nothing was sent.")

        paths = [resolve_user_path(p, ctx, must_exist=True) for p in params.attachments]
        attachments = await asyncio.to_thread(self._load_attachments, paths, cfg.max_attachment_mb)
        message = build_message(
            sender=sender,
            to=to,
            cc=cc,
            subject=params.subject,
            body=params.body,
            html=params.html,
            reply_to=reply_to,
            attachments=attachments,
        )
        password = await asyncio.to_thread(self.secrets.get, PASSWORD_SECRET)
        if not password:
            raise ToolError(
                "No email password is stored. Enter it under Settings > Tools > email (kept in the keyring)."
            )
        ctx.progress(None, f"sending to {len(recipients)} recipient(s)")
        try:
            delivery = await asyncio.to_thread(deliver, cfg, password, message, sender.address, recipients)
        except EmailSendError as exc:
            return ToolResult.fail(f"The email was not sent: {exc}")
        accepted = [r for r in recipients if r not in delivery.refused]
        size = sum(len(a.data) for a in attachments)
        parts = [f"Email '{' '.join(params.subject.split())}' sent to {', '.join(m.address for m in to)}"]
        if cc:
            parts.append(f"cc {', '.join(m.address for m in cc)}")
        if bcc:
            parts.append(f"bcc {len(bcc)} recipient(s)")
        if attachments:
            parts.append(f"{len(attachments)} attachment(s), {size / MB:.2f} MB")
        text = "; ".join(parts) + "."
        if delivery.refused:
            text += " The server refused: " + ", ".join(f"{r} ({why})" for r, why in delivery.refused.items())
        return ToolResult.ok(
            text,
            data={
                "message_id": message["Message-ID"],
                "accepted": accepted,
                "refused": sorted(delivery.refused),
                "attachments": [a.filename for a in attachments],
            },
        )

    @staticmethod
    def _load_attachments(paths: list[Path], max_mb: float) -> list[Attachment]:
        total = 0
        for path in paths:
            if not path.is_file():
                raise ToolError(f"'{path}' is not a file; only files can be attached. Nothing was sent.")
            total += path.stat().st_size
        if total > max_mb * MB:
            raise ToolError(
                f"The attachments total {total / MB:.1f} MB, more than the {max_mb:g} MB limit. "
                "Send fewer or smaller files (or share them another way). Nothing was sent."
            )
        try:
            return [load_attachment(p) for p in paths]
        except OSError as exc:
            raise ToolError(f"Cannot read attachment '{exc.filename}': {exc.strerror}. Nothing was sent.") from None


def _tls_context(cfg: EmailConfig) -> ssl.SSLContext:
    if cfg.ca_file:
        ca = Path(cfg.ca_file).expanduser()
        if not ca.is_file():
            raise EmailSendError(f"the CA file '{ca}' set in the email settings does not exist")
        try:
            return ssl.create_default_context(cafile=str(ca))
        except ssl.SSLError as exc:
            raise EmailSendError(f"the CA file '{ca}' is not a PEM certificate file ({exc.reason})") from None
    return ssl.create_default_context()


def deliver(cfg: EmailConfig, password: str, message: Any, envelope_from: str, recipients: list[str]) -> Delivery:
    """Connect, secure, log in and send (blocking). Raises :class:`EmailSendError` with a clear reason."""
    where = f"{cfg.host}:{cfg.port}"
    context = _tls_context(cfg) if cfg.security != "none" else None
    try:
        smtp: smtplib.SMTP
        if cfg.security == "tls":
            smtp = smtplib.SMTP_SSL(cfg.host, cfg.port, timeout=cfg.timeout_s, context=context)
        else:
            smtp = smtplib.SMTP(cfg.host, cfg.port, timeout=cfg.timeout_s)
        with smtp:
            smtp.ehlo()
            if cfg.security == "starttls":
                if not smtp.has_extn("starttls"):
                    raise EmailSendError(
                        f"{where} does not offer STARTTLS, so the password would travel unencrypted; nothing was "
                        "sent. Use port 465 with security 'tls' if the server supports it."
                    )
                smtp.starttls(context=context)
                smtp.ehlo()
            if smtp.has_extn("auth"):
                _login(smtp, cfg.username, password)
            else:
                log.info("%s offers no AUTH; sending without logging in", where)
            refused = smtp.send_message(message, from_addr=envelope_from, to_addrs=recipients)
    except EmailSendError:
        raise
    except smtplib.SMTPAuthenticationError as exc:
        raise EmailSendError(
            f"{where} rejected the login for '{cfg.username}' ({_reply(exc)}). Check the username and password in "
            "Settings > Tools > email; some providers (QQ, 163, Gmail) need an app password or authorization code."
        ) from None
    except smtplib.SMTPRecipientsRefused as exc:
        listed = ", ".join(f"{r} ({_code_text(v)})" for r, v in exc.recipients.items())
        raise EmailSendError(f"the server refused every recipient: {listed}") from None
    except smtplib.SMTPSenderRefused as exc:
        hint = ""
        if exc.smtp_code == 530:
            hint = "; it wants a login but offered none on this connection: check the port and security settings"
        raise EmailSendError(f"the server refused the sender {envelope_from} ({_reply(exc)}){hint}") from None
    except smtplib.SMTPNotSupportedError as exc:
        raise EmailSendError(f"{where} does not support a needed SMTP feature: {exc}") from None
    except ssl.SSLCertVerificationError as exc:
        raise EmailSendError(
            f"the certificate of {cfg.host} could not be verified ({exc.verify_message}). If the server uses a "
            "private certificate authority, set 'ca_file' in the email settings."
        ) from None
    except ssl.SSLError as exc:
        hint = "port 465 needs security 'tls' and port 587 'starttls'"
        raise EmailSendError(f"the TLS connection to {where} failed ({exc.reason or exc}); {hint}") from None
    except smtplib.SMTPServerDisconnected as exc:
        raise EmailSendError(f"{where} closed the connection unexpectedly ({exc or 'no reason given'})") from None
    except smtplib.SMTPResponseException as exc:
        raise EmailSendError(f"{where} answered with an error ({_reply(exc)})") from None
    except TimeoutError:
        raise EmailSendError(f"{where} did not answer within {cfg.timeout_s:g} s") from None
    except socket.gaierror as exc:
        raise EmailSendError(f"the server name '{cfg.host}' cannot be found ({exc.strerror})") from None
    except ConnectionRefusedError:
        raise EmailSendError(
            f"cannot connect to {where}: the connection was refused (is the host/port right?)"
        ) from None
    except OSError as exc:
        raise EmailSendError(f"cannot connect to {where}: {exc.strerror or exc}") from None
    return Delivery(refused={r: _code_text(v) for r, v in refused.items()})


def _login(smtp: smtplib.SMTP, username: str, password: str) -> None:
    """smtplib.login, except that a non-ASCII name or password (which smtplib cannot encode) is sent
    as UTF-8 with AUTH PLAIN or LOGIN, as RFC 4616 specifies and common servers accept."""
    if username.isascii() and password.isascii():
        smtp.login(username, password)
        return
    mechanisms = smtp.esmtp_features.get("auth", "").upper().split()

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode("ascii")

    if "PLAIN" in mechanisms:
        code, reply = smtp.docmd("AUTH", "PLAIN " + b64(b"\0" + username.encode() + b"\0" + password.encode()))
    elif "LOGIN" in mechanisms:
        code, reply = smtp.docmd("AUTH", "LOGIN " + b64(username.encode()))
        if code == 334:
            code, reply = smtp.docmd(b64(password.encode()))
    else:
        raise EmailSendError(
            "the password has non-ASCII characters, which this server's login methods "
            f"({', '.join(mechanisms) or 'none'}) cannot carry"
        )
    if code not in (235, 503):  # 503: already authenticated
        raise smtplib.SMTPAuthenticationError(code, reply)


def _code_text(value: Any) -> str:
    if isinstance(value, tuple) and len(value) == 2:
        code, msg = value
        text = msg.decode("utf-8", "replace") if isinstance(msg, bytes) else str(msg)
        return f"{code} {text}".strip()
    return str(value)


def _reply(exc: smtplib.SMTPResponseException) -> str:
    return _code_text((exc.smtp_code, exc.smtp_error))
