"""Run tools the way the agent does: the real Dispatcher and a ToolRegistry from the real tools.json."""

from __future__ import annotations

import json
from typing import Any

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
