"""Small tools used by the tool-system tests (the real catalogue lives in weclaw_desktop/tools)."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.toolkit import BaseTool, ToolContext, ToolError, ToolResult, action


class EchoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(description="What to say back", min_length=1)
    times: int = Field(default=1, ge=1, le=5)


class EchoConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    prefix: str = ""


class EchoTool(BaseTool):
    Config = EchoConfig

    @action("Repeat the text back.")
    async def say(self, params: EchoParams, ctx: ToolContext) -> ToolResult:
        return ToolResult.ok(self.config.prefix + " ".join([params.text] * params.times), data={"n": params.times})

    @action("Say nothing, loudly.", risk="high")
    async def shout(self, params: EchoParams, ctx: ToolContext) -> ToolResult:
        return ToolResult.ok(params.text.upper())


class SleepParams(BaseModel):
    seconds: float = Field(ge=0, le=600)


class Nested(BaseModel):
    name: str
    tags: list[str] = []


class NestedParams(BaseModel):
    item: Nested
    extra: dict[str, Any] | None = None


class FaultyTool(BaseTool):
    """Misbehaves on purpose."""

    started: int = 0
    finished: int = 0

    @action("Raise an unexpected exception.")
    async def crash(self, params: EchoParams, ctx: ToolContext) -> ToolResult:
        raise RuntimeError(f"boom: {params.text}")

    @action("Fail in the expected way.")
    async def refuse(self, params: EchoParams, ctx: ToolContext) -> ToolResult:
        raise ToolError(f"cannot do '{params.text}'")

    @action("Sleep for a while.")
    async def sleep(self, params: SleepParams, ctx: ToolContext) -> ToolResult:
        type(self).started += 1
        try:
            await asyncio.sleep(params.seconds)
        finally:
            type(self).finished += 1
        return ToolResult.ok("slept")

    @action("Take a nested object.")
    async def nested(self, params: NestedParams, ctx: ToolContext) -> ToolResult:
        return ToolResult.ok(params.item.name)


class BridgedTool(BaseTool):
    @action("Use the clipboard bridge.")
    async def paste(self, params: SleepParams, ctx: ToolContext) -> ToolResult:
        return ToolResult.ok(await self.bridge("clipboard").read_text())


class NotATool:
    pass
