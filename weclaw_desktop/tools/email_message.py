"""Email addresses and MIME messages for the email tool (no network here).

Addresses are checked strictly enough to catch typos and header injection (no CR/LF, a dotted domain, a
sane local part); internationalised domains are accepted and sent in their IDNA (punycode) form.
"""

from __future__ import annotations

import mimetypes
import re
from dataclasses import dataclass
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import formataddr, formatdate, getaddresses, make_msgid
from pathlib import Path

_LOCAL = re.compile(r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$")
_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")


class AddressError(ValueError):
    """Not an email address we can send to; the message names it and says what is wrong."""


@dataclass(frozen=True)
class Mailbox:
    name: str
    address: str  # ASCII addr-spec (domain in IDNA form)

    def header(self) -> str:
        return formataddr((self.name, self.address)) if self.name else self.address


def parse_mailbox(text: str) -> Mailbox:
    """``bob@example.com`` or ``Bob <bob@example.com>`` -> a checked :class:`Mailbox` (exactly one)."""
    boxes = parse_mailboxes([text])
    if len(boxes) != 1:
        raise AddressError(f"'{text.strip()}' must be exactly one email address")
    return boxes[0]


def parse_mailboxes(items: list[str]) -> list[Mailbox]:
    """Each item may hold several addresses separated by ',' or ';'. Duplicates are dropped."""
    out: list[Mailbox] = []
    seen: set[str] = set()
    for item in items:
        if any(ch in item for ch in "\r\n\x00"):
            raise AddressError(f"{item.strip()!r} contains a line break")
        if item.count("<") != item.count(">"):
            raise AddressError(f"'{item.strip()}' has unbalanced < >")
        for name, addr in getaddresses([item.replace(";", ",")]):
            if not name and not addr:
                continue
            box = _checked(name, addr)
            if box.address.lower() not in seen:
                seen.add(box.address.lower())
                out.append(box)
    if not out and any(i.strip() for i in items):
        raise AddressError(f"no email address in {', '.join(items)!r}")
    return out


def _checked(name: str, addr: str) -> Mailbox:
    shown = f"{name} <{addr}>" if name else addr
    if not addr:
        raise AddressError(f"'{shown}' has no email address (expected name@example.com)")
    if addr.count("@") != 1:
        raise AddressError(f"'{shown}' is not an email address (expected exactly one @, like name@example.com)")
    local, domain = addr.rsplit("@", 1)
    if not local or len(local) > 64 or not _LOCAL.match(local):
        raise AddressError(f"'{shown}': the part before @ is not valid")
    try:
        ascii_domain = domain.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise AddressError(f"'{shown}': the domain '{domain}' is not valid") from None
    labels = ascii_domain.split(".")
    if len(labels) < 2 or not all(_LABEL.match(label) for label in labels) or labels[-1].isdigit():
        raise AddressError(f"'{shown}': the domain '{domain}' is not valid (expected something like example.com)")
    if len(ascii_domain) > 253:
        raise AddressError(f"'{shown}': the domain is too long")
    return Mailbox(name=" ".join(name.split()), address=f"{local}@{ascii_domain}")


@dataclass(frozen=True)
class Attachment:
    path: Path
    filename: str
    content_type: str
    data: bytes


def load_attachment(path: Path) -> Attachment:
    """Read a file that was already checked by pathguard and the size limits (blocking)."""
    ctype, encoding = mimetypes.guess_type(path.name)
    if ctype is None or encoding is not None:  # unknown, or compressed (.gz): send the bytes as they are
        ctype = "application/octet-stream"
    return Attachment(path=path, filename=path.name, content_type=ctype, data=path.read_bytes())


def build_message(
    *,
    sender: Mailbox,
    to: list[Mailbox],
    cc: list[Mailbox],
    subject: str,
    body: str,
    html: str = "",
    reply_to: Mailbox | None = None,
    attachments: list[Attachment] | None = None,
) -> EmailMessage:
    """A MIME message: text body (plus an HTML alternative), attachments; Bcc is never a header."""
    msg = EmailMessage(policy=SMTP)
    msg["From"] = sender.header()
    msg["To"] = ", ".join(m.header() for m in to)
    if cc:
        msg["Cc"] = ", ".join(m.header() for m in cc)
    if reply_to is not None:
        msg["Reply-To"] = reply_to.header()
    msg["Subject"] = " ".join(subject.split())
    msg["Date"] = formatdate(localtime=True)
    msg["Message-ID"] = make_msgid(domain=sender.address.rsplit("@", 1)[1])
    msg.set_content(body or "")
    if html:
        msg.add_alternative(html, subtype="html")
    for att in attachments or []:
        maintype, _, subtype = att.content_type.partition("/")
        msg.add_attachment(att.data, maintype=maintype, subtype=subtype, filename=att.filename)
    return msg
