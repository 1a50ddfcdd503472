"""Run tools the way the agent does: the real Dispatcher and a ToolRegistry from the real tools.json.

Calls made here are not a model round, so they pass ``offered=NO_ROUND`` explicitly; contexts are built
explicitly too (:func:`tool_context`), with the folders and database of the test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from weclaw_desktop.paths import app_paths, tools_json_path
from weclaw_desktop.storage.db import Database
from weclaw_desktop.toolkit import (
    NO_ROUND,
    ApprovalGate,
    ApprovalPolicy,
    AutoApprove,
    CallOutcome,
    Dispatcher,
    ToolCall,
    ToolContext,
    ToolRegistry,
    ToolResult,
)


def tool_context(
    *, data_dir: Path | None = None, outputs_dir: Path | None = None, db: Database | None = None, **fields: Any
) -> ToolContext:
    """A context in this test's WECLAW_HOME folders (``app_paths()``) unless told otherwise; no database
    unless one is given."""
    paths = app_paths()
    return ToolContext(data_dir=data_dir or paths.data, outputs_dir=outputs_dir or paths.outputs, db=db, **fields)


async def direct(
    dispatcher: Dispatcher,
    call: ToolCall,
    ctx: ToolContext | None = None,
    *,
    gate: ApprovalGate | None = None,
    **kwargs: Any,
) -> CallOutcome:
    """One call outside any model round (``NO_ROUND``), with ``gate`` (None: no one to ask)."""
    return await dispatcher.dispatch(call, ctx or tool_context(), gate=gate, offered=NO_ROUND, **kwargs)


class Direct:
    """A Dispatcher whose calls are direct (``NO_ROUND``) and answered by ``gate``; ``dispatch`` gives the
    ToolResult, ``outcome`` the whole CallOutcome. For tests of tools and servers, not of the loop."""

    def __init__(self, registry: ToolRegistry, *, gate: ApprovalGate | None = None, **kwargs: Any) -> None:
        self.dispatcher = Dispatcher(registry, **kwargs)
        self.gate = gate

    async def outcome(self, call: ToolCall, ctx: ToolContext | None = None) -> CallOutcome:
        return await direct(self.dispatcher, call, ctx, gate=self.gate)

    async def dispatch(self, call: ToolCall, ctx: ToolContext | None = None) -> ToolResult:
        return (await self.outcome(call, ctx)).result


class Run:
    """Calls tools through the real Dispatcher and a ToolRegistry built from the real tools.json."""

    def __init__(self, ctx: ToolContext, config: dict[str, dict[str, Any]] | None = None) -> None:
        self.ctx = ctx
        overrides = {"system_info": {"sample_s": 0.1}, **(config or {})}
        self.registry = ToolRegistry.from_path(tools_json_path(), config_overrides=overrides)
        policy = ApprovalPolicy(rules={"cli": {"low": "allow", "medium": "allow", "high": "allow"}})
        self.dispatcher = Dispatcher(self.registry, approval_policy=policy)
        self.gate = AutoApprove()
        self.progress: list[tuple[float | None, str]] = []
        ctx.progress_callback = lambda f, m: self.progress.append((f, m))
        self._n = 0

    def configure(self, tool: str, **values: Any) -> None:
        self.registry.set_config_overrides(tool, {**self.registry.effective_config(tool), **values})

    async def __call__(self, function: str, **arguments: Any) -> ToolResult:
        self._n += 1
        call = ToolCall(id=f"c{self._n}", name=function, arguments=json.dumps(arguments, ensure_ascii=False))
        outcome = await self.dispatcher.dispatch(call, self.ctx, gate=self.gate, offered=NO_ROUND)
        return outcome.result
