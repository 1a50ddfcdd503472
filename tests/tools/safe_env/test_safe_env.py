"""safe_env: secrets never reach a child process's environment."""

from __future__ import annotations

import pytest

from weclaw_desktop.toolkit.redact import _secrets, register_secret
from weclaw_desktop.tools.safe_env import removed_names, safe_env


@pytest.fixture
def registered() -> str:
    value = "hunter2-registered-secret"
    register_secret(value)
    yield value
    _secrets.discard(value)


def test_removes_secret_names_and_values(registered: str) -> None:
    base = {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "WECLAW_API_KEY": "sk-abc",
        "OPENAI_API_KEY": "sk-def",
        "GITHUB_TOKEN": "ghp_x",
        "aws_secret_access_key": "y",
        "DB_PASSWORD": "p",
        "MYSQL_PASSWD": "p",
        "GOOGLE_APPLICATION_CREDENTIALS": "/k.json",
        "INNOCENT_LOOKING": registered,
        "DATABASE_URL": f"postgres://u:{registered}@h/db",
        "LANG": "C.UTF-8",
    }
    env = safe_env(base)
    assert env == {"PATH": "/usr/bin", "HOME": "/home/u", "LANG": "C.UTF-8"}
    assert "INNOCENT_LOOKING" in removed_names(base)


def test_extra_added_but_never_a_secret(registered: str) -> None:
    assert safe_env({"PATH": "/bin"}, extra={"PYTHONIOENCODING": "utf-8"}) == {
        "PATH": "/bin",
        "PYTHONIOENCODING": "utf-8",
    }
    with pytest.raises(ValueError, match="registered secret"):
        safe_env({}, extra={"X": registered})


def test_defaults_to_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WECLAW_API_KEY", "sk-should-not-pass")
    monkeypatch.setenv("WECLAW_TEST_PLAIN", "1")
    env = safe_env()
    assert "WECLAW_API_KEY" not in env
    assert env["WECLAW_TEST_PLAIN"] == "1"
