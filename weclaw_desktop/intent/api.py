"""The contract between the agent loop and tool exposure.

The loop asks an :class:`Exposer` for a :class:`TurnExposure` at the start of each user turn, then, every
round, for the tools to send given the tools the planner says are visible. After each call it reports
the outcome, so the next round can widen (after a failure), add what ``tool_search`` found, and so on.

Implementations: ``weclaw_desktop.intent.exposure`` (progressive, and "all" capped at 128 functions, both
built by ``intent.factory.make_exposer``) and :class:`AllVisible` here, the uncapped minimum.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from weclaw_desktop.toolkit.base import ToolResult


@dataclass
class RoundExposure:
    tools: list[str]  # tool names to expose this round, always-on included, in priority order
    tier: str = ""  # recommended | expanded | clarify | all
    intents: list[str] = field(default_factory=list)
    confidence: float = 0.0
    reasons: dict[str, str] = field(default_factory=dict)  # tool -> why exposed (intent, sticky, found, ...)
    dropped: dict[str, str] = field(default_factory=dict)  # tool -> why wanted but not sent (hidden, over a cap)
    functions: int = 0  # functions the exposed tools hold (all their actions), at most max_functions


class TurnExposure(Protocol):
    def for_round(self, visible: Sequence[str]) -> RoundExposure:
        """Tools for the next round; only names from ``visible`` (the planner's visible tools)."""
        ...

    def note_result(self, tool: str, action: str, result: ToolResult) -> None:
        """A call finished: widen after failure/denial; pick up tool_search findings."""
        ...


class Exposer(Protocol):
    def start_turn(self, text: str, recent_tools: Sequence[Sequence[str]] = ()) -> TurnExposure:
        """``recent_tools``: tools used in the previous user turns of this session, newest first."""
        ...


class _AllTurn:
    def for_round(self, visible: Sequence[str]) -> RoundExposure:
        return RoundExposure(tools=list(visible), tier="all")

    def note_result(self, tool: str, action: str, result: ToolResult) -> None:
        return None


class AllVisible:
    """Exposure mode "all": every visible tool, every round (the loop still caps at 128 functions)."""

    def start_turn(self, text: str, recent_tools: Sequence[Sequence[str]] = ()) -> TurnExposure:
        return _AllTurn()
