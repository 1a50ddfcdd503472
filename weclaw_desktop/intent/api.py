"""The contract between the agent loop and routing.

The loop asks an :class:`Exposer` for a :class:`TurnExposure` at the start of each user turn (given a
:class:`TurnRequest`), then, every round, the one exposure computation (``toolkit/exposure.py``) asks the
turn for the tools it wants (:meth:`TurnExposure.for_round`, a :class:`~weclaw_desktop.toolkit.exposure.Router`)
and applies the function cap. After each call the loop reports the result, so the next round can widen
(after a failure), add what ``tool_search`` found, and so on.

Implementations: ``weclaw_desktop.intent.exposure`` (progressive, and "all", both built by
``intent.factory.make_exposer``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from weclaw_desktop.intent.conversation import Conversation
from weclaw_desktop.toolkit.base import ToolResult
from weclaw_desktop.toolkit.exposure import Routing

#: What a turn's exposure returns each round (the routed tools, before the function cap).
RoundExposure = Routing


@dataclass(frozen=True)
class TurnRequest:
    """What routing may know about a turn when it starts. New context (earlier messages of the
    conversation, attachments, ...) is added here as fields with defaults, so exposers stay compatible."""

    text: str
    recent_tools: tuple[tuple[str, ...], ...] = ()  # tools used in the previous user turns, newest first
    # the earlier turns (user text, assistant answer, tools called, files made): with it, routing itself
    # decides what an earlier turn carries over to a follow-up, and ``recent_tools`` is not added blindly
    conversation: Conversation | None = None

    @classmethod
    def of(
        cls, text: str, recent_tools: Sequence[Sequence[str]] = (), conversation: Conversation | None = None
    ) -> TurnRequest:
        return cls(text, tuple(tuple(t) for t in recent_tools), conversation)


class TurnExposure(Protocol):
    def for_round(self, visible: Sequence[str]) -> RoundExposure:
        """Tools for the next round, in priority order; only names from ``visible``."""
        ...

    def note_result(self, tool: str, action: str, result: ToolResult) -> None:
        """A call finished: widen after failure/denial; pick up tool_search findings."""
        ...


class Exposer(Protocol):
    def start_turn(self, turn: TurnRequest) -> TurnExposure: ...
