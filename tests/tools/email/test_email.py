"""email: sending through a real SMTP server on 127.0.0.1 (aiosmtpd) with AUTH, STARTTLS and implicit TLS."""

from __future__ import annotations

import email
import email.policy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tools.db_support import Caller
from tools.smtp_server import PASSWORD, USER, SmtpServer, free_port, make_certificate

from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.toolkit import AvailabilityContext, Policy, ToolRegistry, plan
from weclaw_desktop.toolkit.base import ToolStatus
from weclaw_desktop.toolkit.diagnostics import Code

# The 'plain' test server (for security "none") requires AUTH without TLS; aiosmtpd warns about exactly that.
pytestmark = pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS:UserWarning")

PDF = b"%PDF-1.4\n" + bytes(range(256)) * 40 + b"\n%%EOF\n"


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def password(memory_keyring: Any) -> str:
    SecretStore().set("email.password", PASSWORD)
    return PASSWORD


@pytest.fixture
def server(certificate: tuple[Path, Path]) -> Iterator[SmtpServer]:
    with SmtpServer("starttls", *certificate) as running:
        yield running


def _config(port: int, cert: Path | None, **extra: Any) -> dict[str, dict[str, Any]]:
    block: dict[str, Any] = {"host": "127.0.0.1", "port": port, "username": USER, "security": "starttls"}
    if cert is not None:
        block["ca_file"] = str(cert)
    block.update(extra)
    return {"email": block}


@pytest.fixture
def mailer(
    make_caller: Callable[..., Caller], server: SmtpServer, certificate: tuple[Path, Path], password: str
) -> Caller:
    return make_caller(_config(server.port, certificate[0]))


def _received(server: SmtpServer, index: int = 0) -> email.message.EmailMessage:
    raw = server.capture.envelopes[index].original_content
    assert isinstance(raw, bytes)
    return email.message_from_bytes(raw, policy=email.policy.default)  # type: ignore[return-value]


async def test_send_with_starttls_auth_recipients_and_attachment(
    mailer: Caller, server: SmtpServer, files_root: Path
) -> None:
    report = files_root / "报告.pdf"
    report.write_bytes(PDF)
    result = await mailer(
        "email_send",
        to=["bob@example.com", "Li Lei <li@example.cn>"],
        cc=["carol@example.org"],
        bcc=["dave@example.net"],
        subject="本周报告 weekly report",
        body="你好，\n附件是本周报告。",
        html="<p>你好，<b>附件</b>是本周报告。</p>",
        attachments=[str(report)],
    )
    assert result.succeeded, (result.output, server.capture.logins)
    assert result.data["accepted"] == ["bob@example.com", "li@example.cn", "carol@example.org", "dave@example.net"]
    assert result.data["refused"] == [] and result.data["attachments"] == ["报告.pdf"]

    [envelope] = server.capture.envelopes
    assert envelope.mail_from == USER
    assert envelope.rcpt_tos == ["bob@example.com", "li@example.cn", "carol@example.org", "dave@example.net"]
    assert server.capture.logins == [(USER, True)]
    msg = _received(server)
    assert msg["Subject"] == "本周报告 weekly report"
    assert msg["To"] == "bob@example.com, Li Lei <li@example.cn>"
    assert msg["Cc"] == "carol@example.org" and msg["Bcc"] is None  # bcc only in the envelope
    assert msg["Message-ID"] == result.data["message_id"]
    plain = msg.get_body(("plain",)).get_content()  # type: ignore[union-attr]
    assert plain.replace("\r\n", "\n") == "你好，\n附件是本周报告。\n"
    assert "<b>附件</b>" in msg.get_body(("html",)).get_content()  # type: ignore[union-attr]
    [attachment] = list(msg.iter_attachments())
    assert attachment.get_filename() == "报告.pdf"
    assert attachment.get_content_type() == "application/pdf"
    assert attachment.get_content() == PDF


async def test_implicit_tls_on_its_own_port(
    make_caller: Callable[..., Caller], certificate: tuple[Path, Path], password: str
) -> None:
    with SmtpServer("tls", *certificate) as tls_server:
        caller = make_caller(_config(tls_server.port, certificate[0], security="ssl"))  # 'ssl' is an alias
        result = await caller("email_send", to=["bob@example.com"], subject="TLS", body="over TLS")
        assert result.succeeded, result.output
        assert tls_server.capture.envelopes[0].rcpt_tos == ["bob@example.com"]
        assert tls_server.capture.logins == [(USER, True)]


async def test_wrong_password_is_a_clear_error(mailer: Caller, server: SmtpServer, memory_keyring: Any) -> None:
    SecretStore().set("email.password", "wrong")
    result = await mailer("email_send", to=["bob@example.com"], subject="Hi", body="x")
    assert result.status is ToolStatus.ERROR
    assert "rejected the login for 'alice@example.com'" in result.output and "535" in result.output
    assert "wrong" not in result.output  # the password never shows
    assert server.capture.envelopes == []
    assert server.capture.logins and all(login == (USER, False) for login in server.capture.logins)


async def test_server_down_is_a_clear_error(
    make_caller: Callable[..., Caller], certificate: tuple[Path, Path], password: str
) -> None:
    caller = make_caller(_config(free_port(), certificate[0]))
    result = await caller("email_send", to=["bob@example.com"], subject="Hi", body="x")
    assert result.status is ToolStatus.ERROR
    assert "cannot connect to 127.0.0.1:" in result.output and "refused" in result.output


async def test_untrusted_certificate_is_refused_without_ca_file(
    make_caller: Callable[..., Caller], server: SmtpServer, password: str
) -> None:
    caller = make_caller(_config(server.port, None))
    result = await caller("email_send", to=["bob@example.com"], subject="Hi", body="x")
    assert result.status is ToolStatus.ERROR
    assert "could not be verified" in result.output and "ca_file" in result.output
    assert server.capture.logins == [] and server.capture.envelopes == []


async def test_no_password_in_plaintext_when_server_lacks_starttls(
    make_caller: Callable[..., Caller], certificate: tuple[Path, Path], password: str
) -> None:
    with SmtpServer("plain", *certificate) as plain:
        refused = await make_caller(_config(plain.port, certificate[0]))(
            "email_send", to=["bob@example.com"], subject="Hi", body="x"
        )
        assert refused.status is ToolStatus.ERROR and "does not offer STARTTLS" in refused.output
        assert plain.capture.logins == [] and plain.capture.envelopes == []

        allowed = await make_caller(_config(plain.port, None, security="none"))(
            "email_send", to=["bob@example.com"], subject="Hi", body="x"
        )
        assert allowed.succeeded, allowed.output  # the user explicitly chose an unencrypted server
        assert plain.capture.logins == [(USER, True)] and len(plain.capture.envelopes) == 1


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"to": ["bob"]}, "Invalid address"),
        ({"to": ["bob@example.com\r\nBcc: eve@evil.com"]}, "line break"),
        ({"to": ["bob@example.com"], "cc": ["carol@@example.org"]}, "Invalid address"),
        ({"to": []}, "to"),
        ({"to": ["bob@example.com"], "subject": ""}, "subject"),
        ({"to": ["bob@example.com"], "attachments": ["/etc/hostname"]}, "outside the folders"),
        ({"to": ["bob@example.com"], "attachments": ["missing.pdf"]}, "does not exist"),
    ],
)
async def test_bad_input_sends_nothing(
    mailer: Caller, server: SmtpServer, files_root: Path, arguments: dict[str, Any], expected: str
) -> None:
    arguments = {"subject": "Hi", "body": "x", **arguments}
    if arguments.get("attachments") == ["missing.pdf"]:
        arguments["attachments"] = [str(files_root / "missing.pdf")]
    result = await mailer("email_send", **arguments)
    assert result.status is ToolStatus.ERROR
    assert expected in result.output
    assert server.capture.envelopes == [] and server.capture.logins == []


async def test_attachment_size_limit_and_folders(
    make_caller: Callable[..., Caller],
    server: SmtpServer,
    certificate: tuple[Path, Path],
    password: str,
    files_root: Path,
) -> None:
    caller = make_caller(_config(server.port, certificate[0], max_attachment_mb=0.01))
    big = files_root / "big.bin"
    big.write_bytes(b"\0" * 20_000)
    too_big = await caller("email_send", to=["bob@example.com"], subject="Hi", body="x", attachments=[str(big)])
    assert too_big.status is ToolStatus.ERROR and "more than the 0.01 MB limit" in too_big.output
    folder = await caller("email_send", to=["bob@example.com"], subject="Hi", body="x", attachments=[str(files_root)])
    assert folder.status is ToolStatus.ERROR and "only files can be attached" in folder.output
    assert server.capture.envelopes == []


async def test_header_injection_in_subject_is_flattened(mailer: Caller, server: SmtpServer) -> None:
    result = await mailer("email_send", to=["bob@example.com"], subject="Hi\r\nBcc: eve@evil.com", body="x")
    assert result.succeeded
    assert server.capture.envelopes[0].rcpt_tos == ["bob@example.com"]
    msg = _received(server)
    assert msg["Bcc"] is None and msg["Subject"] == "Hi Bcc: eve@evil.com"


def _email_diagnostics(config: dict[str, Any], has_secret: bool) -> list[Code]:
    registry = ToolRegistry.from_path(config_overrides={"email": config} if config else None)
    result = plan(registry, Policy(), AvailabilityContext(has_secret=lambda name: has_secret))
    return [d.code for d in result.hidden.get("email", [])]


def test_hidden_until_configured_with_diagnostics() -> None:
    assert _email_diagnostics({}, False) == [Code.CONFIG_MISSING, Code.CONFIG_MISSING, Code.AUTH_MISSING]
    assert _email_diagnostics({"host": "smtp.example.com", "username": USER}, False) == [Code.AUTH_MISSING]
    assert _email_diagnostics({"host": "smtp.example.com", "username": USER}, True) == []


async def test_calling_it_unconfigured_says_what_is_missing(
    make_caller: Callable[..., Caller], no_keyring: Any
) -> None:
    result = await make_caller()("email_send", to=["bob@example.com"], subject="Hi", body="x")
    assert result.status is ToolStatus.ERROR
    assert "not available right now" in result.output
    assert "config-missing" in result.output and "auth-missing" in result.output
