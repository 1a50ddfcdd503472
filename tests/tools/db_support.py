"""Helpers for the database-backed tool tests (memory, todo, reminder, email): a dispatcher-backed caller and notifier bridges that record."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.toolkit import (
    NO_ROUND,
    AutoApprove,
    AvailabilityContext,
    Dispatcher,
    ToolCall,
    ToolContext,
    ToolRegistry,
)
from weclaw_desktop.toolkit.base import ToolResult


@dataclass
class RecordingNotifier:
    """A notifier bridge that records what it was asked to show."""

    shown: list[tuple[str, str, bool]] = field(default_factory=list)

    async def notify(self, title: str, message: str, *, urgent: bool = False) -> None:
        self.shown.append((title, message, urgent))


class FailingNotifier:
    def __init__(self) -> None:
        self.calls = 0

    async def notify(self, title: str, message: str, *, urgent: bool = False) -> None:
        self.calls += 1
        raise RuntimeError("tray is gone")


class Caller:
    """Calls tools the way the agent does: function name + JSON arguments through the dispatcher."""

    def __init__(self, ctx: ToolContext, config: dict[str, dict[str, Any]] | None = None) -> None:
        self.ctx = ctx
        self.secrets = SecretStore()
        self.registry = ToolRegistry.from_path(config_overrides=config or {})
        self.dispatcher = Dispatcher(
            self.registry,
            availability=lambda: AvailabilityContext(has_secret=self.secrets.has),
        )

    async def __call__(self, function: str, **arguments: Any) -> ToolResult:
        call = ToolCall(id="c1", name=function, arguments=json.dumps(arguments, ensure_ascii=False))
        # a direct call (not a model round), answered yes by an automatic gate
        return (await self.dispatcher.dispatch(call, self.ctx, gate=AutoApprove(), offered=NO_ROUND)).result
