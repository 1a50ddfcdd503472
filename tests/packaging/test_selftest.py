"""``weclaw --self-test`` from source, and the keyring guard behind the bundle's self-test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from weclaw_desktop.selfcheck import keyring_check

ROOT = Path(__file__).resolve().parents[2]
CHECKS = [
    "paths",
    "registry",
    "tools.json",
    "tls",
    "keyring",
    "keyring-backends",
    "fonts",
    "timezones",
    "window",
    "pairing-qr",
    "translations",
    "provider",
    "python_runner",
    "python-stdlib",
    "child-env",
]


def _clean_env(home: Path) -> dict[str, str]:
    env = {**os.environ, "WECLAW_HOME": str(home), "QT_QPA_PLATFORM": "offscreen", "LANG": "C.UTF-8"}
    for name in ("WECLAW_API_KEY", "OPENAI_API_KEY", "WECLAW_TOOLS"):
        env.pop(name, None)
    return env


@pytest.fixture(scope="module")
def self_test(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    home = tmp_path_factory.mktemp("selftest-home")
    proc = subprocess.run(
        [sys.executable, "-m", "weclaw_desktop", "--self-test"],
        cwd=ROOT,
        env=_clean_env(home),
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc, home


def _lines(stdout: str) -> dict[str, str]:
    """check name -> the whole line."""
    found = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in ("ok", "FAIL"):
            found[parts[1]] = line
    return found


def test_self_test_from_source_passes(self_test: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    proc, home = self_test
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    lines = _lines(proc.stdout)
    assert list(lines) == CHECKS
    assert all(line.startswith("ok ") for line in lines.values()), proc.stdout
    assert f"self-test passed: {len(CHECKS)}/{len(CHECKS)} checks" in proc.stdout
    assert "(source;" in proc.stdout.splitlines()[0]
    assert str(home / "data") in lines["paths"]  # the given WECLAW_HOME is used, nothing else
    assert "print(6 * 7) -> 42" in lines["python_runner"]
    assert "3 text deltas streamed" in lines["provider"]
    assert "stdlib modules import, sys.executable -c works, a spawn Pool works" in lines["python-stdlib"]
    assert "from source" in lines["child-env"]
    assert "trust from the system store" in lines["tls"]
    for tool in ("clipboard", "notify", "screen", "open"):
        assert tool in lines["window"].split("now available:")[1]


def test_self_test_reports_keyring_and_its_native_backend(
    self_test: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    lines = _lines(self_test[0].stdout)
    assert "active keyring.backends." in lines["keyring"]
    assert "native backend and deps import" in lines["keyring"]
    if sys.platform.startswith("linux"):
        assert "Secret Service DH+AES round trip ok" in lines["keyring"]
    # the subprocess saw the same set of backends, with the same reasons, as this interpreter does
    reported = lines["keyring-backends"].split("ms", 1)[1].strip()
    assert reported == keyring_check.backend_summary()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Secret Service is the Linux backend")
def test_secret_service_backend_and_crypto_deps_import() -> None:
    imported = keyring_check.native_modules()
    for name in ("keyring.backends.SecretService", "secretstorage", "jeepney", "_cffi_backend"):
        assert name in imported and name in sys.modules
    keyring_check.secret_service_crypto_roundtrip()
    summary = keyring_check.backend_summary()
    secret_service = next(p for p in summary.split("; ") if p.startswith("keyring.backends.SecretService.Keyring="))
    assert "SecretStorage required" not in secret_service


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Secret Service is the Linux backend")
@pytest.mark.parametrize("trimmed", ["_cffi_backend", "jeepney", "secretstorage"])
def test_guard_catches_a_trimmed_away_dependency(trimmed: str) -> None:
    """What a bundle that pruned one dependency would report: the guard names it, the summary differs."""
    probe = (
        f"import sys; sys.modules[{trimmed!r}] = None\n"
        "from weclaw_desktop.selfcheck import keyring_check as k\n"
        "print(k.backend_summary())\n"
        "try:\n    k.native_modules()\nexcept ImportError as exc:\n    print('MISSING', exc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    summary, missing = proc.stdout.splitlines()[:2]
    assert "keyring.backends.SecretService.Keyring=!SecretStorage required" in summary
    assert summary != keyring_check.backend_summary()
    assert missing.startswith("MISSING ") and "the native keyring backend would be lost" in missing
