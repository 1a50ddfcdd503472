"""A tool for bench/ui.py: CPU-bound blocking work, done off the event loop as tools must."""

from __future__ import annotations

import asyncio
import hashlib
import time

from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.toolkit import BaseTool, ToolContext, ToolResult, action


class BlockParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seconds: float = Field(default=2.0, ge=0, le=60, description="how long to keep a CPU busy")


def _burn(seconds: float) -> int:
    """Pure-Python work (holds the GIL between switch intervals), the worst case for the UI thread."""
    end = time.perf_counter() + seconds
    n = 0
    data = b"x" * 64
    while time.perf_counter() < end:
        data = hashlib.sha256(data).digest()
        n += sum(data[:8])
    return n


class BlockTool(BaseTool):
    @action("Do blocking CPU work for a while (benchmark).")
    async def burn(self, params: BlockParams, ctx: ToolContext) -> ToolResult:
        n = await asyncio.to_thread(_burn, params.seconds)
        return ToolResult.ok(f"burned {n}")
