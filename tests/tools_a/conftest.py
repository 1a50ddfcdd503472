"""Fixtures for the file/shell/python_runner/archive/doc_writer tools: a temp home, never the real one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from weclaw_desktop.paths import tools_json_path
from weclaw_desktop.toolkit import (
    ApprovalPolicy,
    AutoApprove,
    Dispatcher,
    ToolCall,
    ToolContext,
    ToolRegistry,
    ToolResult,
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """tmp_path/home is the user's home folder for this test (HOME, USERPROFILE and the trash point there)."""
    user_home = tmp_path / "home"
    user_home.mkdir()
    monkeypatch.setenv("HOME", str(user_home))
    monkeypatch.setenv("USERPROFILE", str(user_home))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("LOCALAPPDATA", raising=False)
    monkeypatch.delenv("APPDATA", raising=False)
    try:  # send2trash's freedesktop backend computes the home trash at import time
        import send2trash.plat_other as trash

        data_home = user_home / ".local" / "share"
        monkeypatch.setattr(trash, "XDG_DATA_HOME", bytes(data_home))
        monkeypatch.setattr(trash, "HOMETRASH_B", bytes(data_home / "Trash"))
        monkeypatch.setattr(trash, "HOMETRASH", str(data_home / "Trash"))
    except ImportError:
        pass
    yield user_home


@pytest.fixture
def outputs(tmp_path: Path) -> Path:
    out = tmp_path.resolve() / "outputs"
    out.mkdir()
    return out


@pytest.fixture
def ctx(home: Path, outputs: Path, tmp_path: Path) -> ToolContext:
    return ToolContext(outputs_dir=outputs, data_dir=tmp_path / "data", allowed_roots=[home])


class Run:
    """Calls tools through the real Dispatcher and a ToolRegistry built from the real tools.json."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        self.registry = ToolRegistry.from_path(tools_json_path())
        policy = ApprovalPolicy(rules={"cli": {"low": "allow", "medium": "allow", "high": "allow"}})
        self.dispatcher = Dispatcher(self.registry, approval_policy=policy, gate=AutoApprove())
        self.progress: list[tuple[float | None, str]] = []
        ctx.progress_callback = lambda f, m: self.progress.append((f, m))
        self._n = 0

    async def __call__(self, function: str, **arguments: Any) -> ToolResult:
        self._n += 1
        call = ToolCall(id=f"c{self._n}", name=function, arguments=json.dumps(arguments, ensure_ascii=False))
        return await self.dispatcher.dispatch(call, self.ctx)


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
