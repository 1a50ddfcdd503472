"""The clipboard tool: read or set the text on the system clipboard, through the clipboard bridge (Qt)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.bridges.protocols import ClipboardBridge
from weclaw_desktop.toolkit import BaseTool, NoParams, ToolContext, ToolResult, action

MAX_WRITE = 1_000_000


class ClipboardConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_read_chars: int = Field(default=50_000, ge=100, le=1_000_000, description="Longest text given to the model")


class WriteParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=MAX_WRITE, description="The text to put on the clipboard")


class ClipboardTool(BaseTool):
    Config = ClipboardConfig

    @action(
        "Read the text currently on the user's clipboard (what they copied). Use it when the user says "
        "'what I copied', 'the clipboard' or asks you to work on copied text."
    )
    async def read(self, params: NoParams, ctx: ToolContext) -> ToolResult:
        bridge: ClipboardBridge = self.bridge("clipboard")
        text = await bridge.read_text()
        if not text:
            return ToolResult.ok("The clipboard is empty or holds no text (it may hold an image or files).",
                                 data={"chars": 0})  # fmt: skip
        limit = self.config.max_read_chars
        data = {"chars": len(text), "lines": text.count("\n") + 1, "truncated": len(text) > limit}
        shown = text[:limit]
        note = f"\n\n[clipboard text cut at {limit:,} of {len(text):,} characters]" if len(text) > limit else ""
        result = ToolResult.ok(f"Clipboard text ({len(text):,} characters):\n{shown}{note}", data=data)
        result.truncated = len(text) > limit
        return result

    @action(
        "Put text on the user's clipboard so they can paste it elsewhere. Use it when the user asks you to "
        "copy something for them. It replaces what the clipboard held."
    )
    async def write(self, params: WriteParams, ctx: ToolContext) -> ToolResult:
        bridge: ClipboardBridge = self.bridge("clipboard")
        await bridge.write_text(params.text)
        return ToolResult.ok(
            f"Copied {len(params.text):,} characters to the clipboard; the user can paste them now.",
            data={"chars": len(params.text)},
        )
