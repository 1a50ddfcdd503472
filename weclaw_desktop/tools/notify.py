"""The notify tool: show a desktop notification through the notifier bridge (tray message)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from weclaw_desktop.bridges.protocols import NotifierBridge
from weclaw_desktop.toolkit import BaseTool, ToolContext, ToolResult, action


class SendParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = Field(default="WeClaw", max_length=100, description="A short headline, e.g. 'Download finished'")
    message: str = Field(min_length=1, max_length=1000, description="The notification text")
    urgent: bool = Field(default=False, description="Mark it urgent (stays longer, may sound); only for real alarms")

    @field_validator("title", "message")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        cleaned = value.strip()
        if not cleaned:
            raise ValueError("must not be blank")
        return cleaned


class NotifyTool(BaseTool):
    @action(
        "Show a desktop notification to the user, even when the WeClaw window is hidden. Use it to tell the user "
        "that a long task finished or to alert them; for normal answers just reply in the chat."
    )
    async def send(self, params: SendParams, ctx: ToolContext) -> ToolResult:
        bridge: NotifierBridge = self.bridge("notifier")
        await bridge.notify(params.title, params.message, urgent=params.urgent)
        return ToolResult.ok(
            f"Notification shown: {params.title}: {params.message}",
            data={"title": params.title, "urgent": params.urgent},
        )
