"""Fixtures for the file/shell/python_runner/archive/doc_writer tools: a temp home, never the real one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from toolrun import Run

from weclaw_desktop.toolkit import ToolContext


@pytest.fixture
def outputs(tmp_path: Path) -> Path:
    out = tmp_path.resolve() / "outputs"
    out.mkdir()
    return out


@pytest.fixture
def ctx(home: Path, outputs: Path, tmp_path: Path) -> ToolContext:
    return ToolContext(outputs_dir=outputs, data_dir=tmp_path / "data", db=None, allowed_roots=[home])


@pytest.fixture
def run(ctx: ToolContext) -> Run:
    return Run(ctx)


@pytest.fixture
def rhome(home: Path) -> Path:
    """The home folder with symlinks resolved (what the tools report)."""
    return home.resolve()


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """WECLAW_API_KEY and a registered secret (also hidden under an innocent name) in our environment."""
    from weclaw_desktop.toolkit.redact import _secrets, register_secret

    secret = "registered-Secret-Value-42"
    register_secret(secret)
    monkeypatch.setenv("WECLAW_API_KEY", "sk-weclaw-test-key-123456")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-test-key-123456")
    monkeypatch.setenv("HARMLESS_NAME", secret)
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-abcdef")
    monkeypatch.setenv("WECLAW_VISIBLE", "visible-value")
    yield secret
    _secrets.discard(secret)
