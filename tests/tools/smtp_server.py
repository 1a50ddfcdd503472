"""A real SMTP server on 127.0.0.1 for the email tests (aiosmtpd in its own thread), with AUTH and TLS."""

from __future__ import annotations

import datetime as dt
import ipaddress
import socket
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, Envelope, LoginPassword, Session
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

USER = "alice@example.com"
PASSWORD = "correct horse 电池"


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """A throwaway self-signed certificate for localhost / 127.0.0.1: (cert.pem, key.pem)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Capture:
    """The handler: keeps every accepted message and every login attempt."""

    envelopes: list[Envelope] = field(default_factory=list)
    logins: list[tuple[str, bool]] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Session, envelope: Envelope) -> str:
        self.envelopes.append(envelope)
        return "250 Message accepted"

    def authenticate(self, server: Any, session: Session, envelope: Envelope, mechanism: str, data: Any) -> AuthResult:
        if not isinstance(data, LoginPassword):
            return AuthResult(success=False, handled=False)
        login = data.login.decode()
        ok = login == USER and data.password.decode() == PASSWORD
        self.logins.append((login, ok))
        return AuthResult(success=ok, handled=False)


class SmtpServer:
    """mode: 'starttls' (plain + STARTTLS required before AUTH), 'tls' (implicit TLS), 'plain' (no TLS)."""

    def __init__(self, mode: str, cert: Path, key: Path) -> None:
        self.mode = mode
        self.capture = Capture()
        self.port = free_port()
        server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        server_tls.load_cert_chain(cert, key)
        kwargs: dict[str, Any] = {
            "authenticator": self.capture.authenticate,
            "auth_required": True,
            # aiosmtpd does not count implicit TLS as TLS for this check, so only STARTTLS mode sets it
            "auth_require_tls": mode == "starttls",
        }
        if mode == "starttls":
            kwargs.update(tls_context=server_tls, require_starttls=True)
        elif mode == "tls":
            kwargs.update(ssl_context=server_tls)
        self.controller = Controller(self.capture, hostname="127.0.0.1", port=self.port, **kwargs)

    def __enter__(self) -> SmtpServer:
        self.controller.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.controller.stop()
