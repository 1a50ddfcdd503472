"""Tools for bench/ui.py: CPU-bound blocking work done off the event loop as tools must, a quick call
with a few lines of output, a call that waits (for parallel calls), and a dynamic tool like an MCP
server's (registered and removed at run time)."""

from __future__ import annotations

import asyncio
import hashlib
import time

from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.toolkit import BaseTool, ToolContext, ToolResult, action


class BlockParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seconds: float = Field(default=2.0, ge=0, le=60, description="how long to keep a CPU busy")


class QuickParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    n: int = Field(default=0, description="a number to echo")


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

    @action("Answer at once with a few lines (benchmark).")
    async def quick(self, params: QuickParams, ctx: ToolContext) -> ToolResult:
        lines = "\n".join(f"line {i}: value {params.n * i}" for i in range(6))
        return ToolResult.ok(f"quick {params.n}\n{lines}")

    @action("Wait without using the CPU (benchmark).")
    async def wait(self, params: BlockParams, ctx: ToolContext) -> ToolResult:
        await asyncio.sleep(params.seconds)
        return ToolResult.ok(f"waited {params.seconds} s")


class DynamicTool(BaseTool):
    """Stands in for an MCP server's tool set."""

    @action("Look something up (benchmark dynamic tool).")
    async def lookup(self, params: QuickParams, ctx: ToolContext) -> ToolResult:
        return ToolResult.ok(str(params.n))

    @action("Store something (benchmark dynamic tool).")
    async def store(self, params: QuickParams, ctx: ToolContext) -> ToolResult:
        return ToolResult.ok(str(params.n))
