"""HTTPS keeps working on a machine without a system CA store: the certifi fallback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = (
    "from weclaw_desktop.net import ssl_context, trust_source;"
    "ctx = ssl_context(); print(trust_source(), ctx.cert_store_stats()['x509_ca'] > 0)"
)


def _probe(env: dict[str, str]) -> str:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_system_store_is_used_when_present() -> None:
    assert _probe({}) == "system True"


def test_certifi_is_used_when_the_system_has_no_cas(tmp_path: Path) -> None:
    empty = tmp_path / "no-certs"
    empty.mkdir()
    # OpenSSL honours these variables: point both at nothing, as on a machine without ca-certificates.
    assert _probe({"SSL_CERT_FILE": str(empty / "none.pem"), "SSL_CERT_DIR": str(empty)}) == "certifi True"
