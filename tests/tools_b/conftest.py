"""Fixtures for the web, system_info, datetime, calculator, clipboard, notify, screen and open tools."""

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
    """tmp_path/home is the user's home folder for this test."""
    user_home = tmp_path / "home"
    user_home.mkdir()
    monkeypatch.setenv("HOME", str(user_home))
    monkeypatch.setenv("USERPROFILE", str(user_home))
    yield user_home


@pytest.fixture
def ctx(home: Path, tmp_path: Path) -> ToolContext:
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    return ToolContext(outputs_dir=outputs, data_dir=tmp_path / "data", allowed_roots=[home])


class Run:
    """Calls tools through the real Dispatcher and a ToolRegistry built from the real tools.json."""

    def __init__(self, ctx: ToolContext, config: dict[str, dict[str, Any]] | None = None) -> None:
        self.ctx = ctx
        overrides = {"system_info": {"sample_s": 0.1}, **(config or {})}
        self.registry = ToolRegistry.from_path(tools_json_path(), config_overrides=overrides)
        policy = ApprovalPolicy(rules={"cli": {"low": "allow", "medium": "allow", "high": "allow"}})
        self.dispatcher = Dispatcher(self.registry, approval_policy=policy, gate=AutoApprove())
        self.progress: list[tuple[float | None, str]] = []
        ctx.progress_callback = lambda f, m: self.progress.append((f, m))
        self._n = 0

    def configure(self, tool: str, **values: Any) -> None:
        self.registry.set_config_overrides(tool, {**self.registry.effective_config(tool), **values})

    async def __call__(self, function: str, **arguments: Any) -> ToolResult:
        self._n += 1
        call = ToolCall(id=f"c{self._n}", name=function, arguments=json.dumps(arguments, ensure_ascii=False))
        return await self.dispatcher.dispatch(call, self.ctx)


@pytest.fixture
def run(ctx: ToolContext) -> Run:
    return Run(ctx)
