"""TLS trust: the operating system's store (wherever the distribution keeps it), certifi only where there is
none, checked with real handshakes against a local TLS server whose CA is made here."""

from __future__ import annotations

import datetime
import os
import shutil
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import sys
from weclaw_desktop import net
net.CA_FILE_CANDIDATES = tuple(sys.argv[1].split(",")) if sys.argv[1] else ()
found = net.trust()
ctx = net.ssl_context()
print(found.source, found.how, found.where)
port = int(sys.argv[2]) if len(sys.argv) > 2 else 0
if port:
    import socket
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, ctx.wrap_socket(raw, server_hostname="localhost") as tls:
            print("handshake ok", tls.version())
    except ssl.SSLCertVerificationError as exc:
        print("handshake refused", exc.verify_message)
""".replace("import sys\n", "import ssl, sys\n", 1)


def _probe(env: dict[str, str], candidates: list[str], port: int = 0) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, ",".join(candidates), str(port)],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **env}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()


def _no_system_store(tmp_path: Path) -> dict[str, str]:
    """OpenSSL honours these variables: point both at nothing, as on a machine without ca-certificates."""
    empty = tmp_path / "no-certs"
    empty.mkdir(exist_ok=True)
    return {"SSL_CERT_FILE": str(empty / "none.pem"), "SSL_CERT_DIR": str(empty)}


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, int]]:
    """A CA, a server certificate for localhost signed by it, and a TLS server using it: (ca.pem, other-ca.pem, port)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    folder = tmp_path_factory.mktemp("pki")
    now = datetime.datetime.now(datetime.UTC)

    def ca(name: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        cert = (
            x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
            .sign(key, hashes.SHA256())
        )  # fmt: skip
        return key, cert

    ca_key, ca_cert = ca("WeClaw test org CA")
    _other_key, other_cert = ca("Some other CA")
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_cert.subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    pem = serialization.Encoding.PEM
    (folder / "ca.pem").write_bytes(ca_cert.public_bytes(pem))
    (folder / "other.pem").write_bytes(other_cert.public_bytes(pem))
    (folder / "server.pem").write_bytes(cert.public_bytes(pem))
    (folder / "server.key").write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(folder / "server.pem", folder / "server.key")
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            try:
                with server_ctx.wrap_socket(conn, server_side=True) as tls:
                    tls.recv(1)
            except (ssl.SSLError, OSError):
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield folder / "ca.pem", folder / "other.pem", listener.getsockname()[1]
    stop.set()
    thread.join(5)
    listener.close()


def test_system_store_is_used_when_present() -> None:
    source, how, _where = _probe({}, [])[0].split(" ", 2)
    assert (source, how) in (("system", "file"), ("system", "folder"), ("system", "truststore"))


def test_certifi_only_when_the_system_has_no_store_anywhere(tmp_path: Path) -> None:
    first = _probe(_no_system_store(tmp_path), [str(tmp_path / "missing.pem")])[0]
    assert first.startswith("certifi certifi ") and first.endswith("cacert.pem")


def test_a_distribution_store_elsewhere_is_found(tmp_path: Path, pki: tuple[Path, Path, int]) -> None:
    """OpenSSL's built-in default holds nothing (a bundle built on Debian, running on Fedora): the next
    known location is used, and it really verifies (an organisation CA in it is trusted)."""
    ca, _other, port = pki
    fedora = tmp_path / "etc-pki" / "tls-ca-bundle.pem"
    fedora.parent.mkdir()
    shutil.copy(ca, fedora)
    lines = _probe(_no_system_store(tmp_path), [str(tmp_path / "missing.pem"), str(fedora)], port)
    assert lines[0] == f"system file {fedora}"
    assert lines[1].startswith("handshake ok")


def test_an_untrusted_server_is_refused(tmp_path: Path, pki: tuple[Path, Path, int]) -> None:
    _ca, other, port = pki
    lines = _probe({"SSL_CERT_FILE": str(other), "SSL_CERT_DIR": str(tmp_path)}, [], port)
    assert lines[0] == f"system file {other}"
    assert lines[1].startswith("handshake refused")


def test_native_platforms_use_truststore(monkeypatch: pytest.MonkeyPatch) -> None:
    from weclaw_desktop import net

    for platform, store in (("win32", "Windows certificate store"), ("darwin", "macOS keychain")):
        found = net.find_trust(platform)
        assert (found.source, found.how, found.where) == ("system", "truststore", store)
        assert "through truststore" in found.text
