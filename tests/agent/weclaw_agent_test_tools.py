"""Tools for the agent tests: child processes (Stop, environment), big outputs, progress."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.toolkit import BaseTool, NoParams, ToolContext, ToolResult, action


class SleepChildParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seconds: float = Field(default=60, description="how long the child sleeps")


class SizeParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    chars: int = Field(description="output size", ge=0, le=10_000_000)


class ProcTool(BaseTool):
    """Starts child processes the way real tools (shell, python_runner) do."""

    @action("Start a child process that sleeps; it is killed when the call is cancelled.")
    async def sleep(self, params: SleepChildParams, ctx: ToolContext) -> ToolResult:
        proc = await asyncio.create_subprocess_exec(sys.executable, "-c", f"import time; time.sleep({params.seconds})")
        await asyncio.to_thread((ctx.outputs_dir / "child.pid").write_text, str(proc.pid), "utf-8")
        ctx.progress(0.1, "child started", force=True)
        try:
            await proc.wait()
        except asyncio.CancelledError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            raise
        return ToolResult.ok(f"child exited {proc.returncode}")

    @action("Start a child process that prints its environment.")
    async def env(self, params: NoParams, ctx: ToolContext) -> ToolResult:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            "import json, os; print(json.dumps(dict(os.environ)))",
            stdout=asyncio.subprocess.PIPE,
        )
        out, _ = await proc.communicate()
        await asyncio.to_thread(Path(ctx.outputs_dir / "child-env.json").write_bytes, out)
        names = sorted(json.loads(out))
        return ToolResult.ok(f"{len(names)} variables", data={"pid": os.getpid()})

    @action("Return a very long text.")
    async def big(self, params: SizeParams, ctx: ToolContext) -> ToolResult:
        body = "HEAD" + "x" * max(0, params.chars - 8) + "TAIL"
        return ToolResult.ok(body)


def tiny_png(width: int = 2, height: int = 2, rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A real PNG (stdlib only): what a screenshot or an MCP image tool writes."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    row = b"\x00" + bytes(rgb) * width
    raw = row * height
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


class PictureParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(default="screenshot.png", description="file name")


class PicTool(BaseTool):
    """Saves a picture and lists it in the result's files, like the screen tool and MCP image tools do."""

    @action("Take a picture of the screen and save it as a PNG file.")
    async def take(self, params: PictureParams, ctx: ToolContext) -> ToolResult:
        target = ctx.outputs_dir / params.name
        await asyncio.to_thread(target.write_bytes, tiny_png())
        return ToolResult.ok(f"Saved {target.name} (2x2 pixels).", files=[target])
