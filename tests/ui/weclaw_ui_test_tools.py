"""Tools for the GUI tests: one that works for a while with progress, one that produces a file."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.toolkit import BaseTool, ToolContext, ToolResult, action


class WorkParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seconds: float = Field(default=30, ge=0, le=600, description="how long to work")


class ReportParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(description="file name to write in the outputs folder")
    text: str = Field(description="what to write")


class WorkTool(BaseTool):
    cancelled = 0

    @action("Work for a while, reporting progress.")
    async def run(self, params: WorkParams, ctx: ToolContext) -> ToolResult:
        steps = max(1, int(params.seconds / 0.05))
        try:
            for i in range(steps):
                ctx.progress((i + 1) / steps, f"step {i + 1}", force=True)
                await asyncio.sleep(0.05)
        except asyncio.CancelledError:
            type(self).cancelled += 1
            raise
        return ToolResult.ok("worked")

    @action("Write a small report file.")
    async def report(self, params: ReportParams, ctx: ToolContext) -> ToolResult:
        path = ctx.outputs_dir / params.name
        await asyncio.to_thread(path.write_text, params.text, "utf-8")
        return ToolResult.ok(f"wrote {path.name}", files=[path])
