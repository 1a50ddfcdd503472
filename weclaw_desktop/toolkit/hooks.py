"""Hooks around every tool call: a public API for plugins, the MCP bridge and the app itself.

A *before* hook sees the validated arguments and may rewrite them, block the call with a message for the
model, or require approval. An *after* hook sees the result and may replace it. Hooks run for built-in,
plugin and MCP tools alike, in the order they were added; a hook that raises fails the call (the error
is reported, never swallowed).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from weclaw_desktop.toolkit.base import Risk, ToolContext, ToolResult


@dataclass
class HookCall:
    tool: str
    action: str
    function: str
    arguments: dict[str, Any]
    risk: Risk
    ctx: ToolContext


@dataclass(frozen=True)
class BeforeOutcome:
    arguments: dict[str, Any] | None = None
    block: str | None = None
    require_approval: str | None = None

    @classmethod
    def rewrite(cls, arguments: dict[str, Any]) -> BeforeOutcome:
        return cls(arguments=arguments)

    @classmethod
    def blocked(cls, message: str) -> BeforeOutcome:
        return cls(block=message)

    @classmethod
    def ask(cls, reason: str) -> BeforeOutcome:
        return cls(require_approval=reason)


BeforeHook = Callable[[HookCall], Awaitable[BeforeOutcome | None]]
AfterHook = Callable[[HookCall, ToolResult], Awaitable[ToolResult | None]]


@dataclass
class _Registered:
    fn: Any
    pattern: str
    name: str


@dataclass
class Hooks:
    _before: list[_Registered] = field(default_factory=list)
    _after: list[_Registered] = field(default_factory=list)

    def add_before(self, hook: BeforeHook, *, tools: str = "*", name: str = "") -> Callable[[], None]:
        """Run ``hook`` before calls whose function name matches ``tools``. Returns a remover."""
        entry = _Registered(hook, tools, name or getattr(hook, "__name__", "hook"))
        self._before.append(entry)
        return lambda: self._before.remove(entry) if entry in self._before else None

    def add_after(self, hook: AfterHook, *, tools: str = "*", name: str = "") -> Callable[[], None]:
        entry = _Registered(hook, tools, name or getattr(hook, "__name__", "hook"))
        self._after.append(entry)
        return lambda: self._after.remove(entry) if entry in self._after else None

    def before_for(self, function: str) -> list[tuple[str, BeforeHook]]:
        return [(h.name, h.fn) for h in self._before if fnmatchcase(function, h.pattern)]

    def after_for(self, function: str) -> list[tuple[str, AfterHook]]:
        return [(h.name, h.fn) for h in self._after if fnmatchcase(function, h.pattern)]
