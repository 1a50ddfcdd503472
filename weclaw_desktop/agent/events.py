"""Typed events a turn emits. The CLI prints them, the GUI renders them; the loop knows neither.

Every event carries the ``run_id`` of its turn and the ``session_id``. Tool-call events carry the
``call_id`` the model gave the call, so a front end can keep one card per call. Status, risk, who
decided and the error kind are the enums of ``toolkit/outcome.py`` (str enums: they compare equal to
their values). ``to_json`` gives the ``weclaw chat --json`` line of an event, where every enum is its
plain string value.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from weclaw_desktop.toolkit.base import Risk, ToolStatus
from weclaw_desktop.toolkit.outcome import DecidedBy, ErrorKind

DoneReason = Literal["completed", "max_rounds", "loop_guard", "cancelled", "error", "budget"]


@dataclass(frozen=True, kw_only=True)
class Event:
    run_id: str
    session_id: str
    at: float = field(default_factory=time.time)

    @classmethod
    def event_name(cls) -> str:
        """The snake_case event type ("tool_call_finished"); the ``event`` key of the JSON line."""
        return "".join("_" + c.lower() if c.isupper() else c for c in cls.__name__).lstrip("_")

    @property
    def kind(self) -> str:
        """Same as :meth:`event_name`, except on ErrorOccurred, whose ``kind`` field is the error category."""
        return self.event_name()

    def to_json(self) -> str:
        return json.dumps({"event": self.event_name(), **asdict(self)}, ensure_ascii=False, default=str)


@dataclass(frozen=True, kw_only=True)
class RoundStarted(Event):
    round: int
    tools: list[str]  # tool names exposed this round (always-on included)
    functions: list[str]  # function names sent to the model
    hidden: dict[str, list[str]] = field(default_factory=dict)  # tool -> diagnostic codes
    tier: str = ""  # recommended | expanded | clarify | all
    intents: list[str] = field(default_factory=list)
    dropped: dict[str, str] = field(default_factory=dict)  # tool routing wanted -> why it is not offered


@dataclass(frozen=True, kw_only=True)
class TextDelta(Event):
    text: str


@dataclass(frozen=True, kw_only=True)
class ReasoningDelta(Event):
    """Thinking text of a reasoning model as it streams (shown apart from the answer, never part of it)."""

    text: str


@dataclass(frozen=True, kw_only=True)
class ReasoningRetracted(Event):
    """Text already streamed as answer (TextDelta) turned out to be thinking: a chat template opened the
    ``<think>`` block in the prompt, and only its ``</think>`` arrived. Front ends move ``text`` to the thinking."""

    text: str


@dataclass(frozen=True, kw_only=True)
class ToolsWithheld(Event):
    """The model is marked as not supporting tools: none are offered this turn, and why."""

    model: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class AssistantMessage(Event):
    """A completed assistant message of one round (text and/or tool calls), already stored."""

    text: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    reasoning: str = ""  # the model's thinking for this message, stored with it
    reasoning_ms: int = 0


@dataclass(frozen=True, kw_only=True)
class ToolCallRequested(Event):
    call_id: str
    function: str
    tool: str  # "" when the function is unknown
    action: str
    arguments: str  # raw JSON text as the model sent it


@dataclass(frozen=True, kw_only=True)
class ToolCallAwaitingApproval(Event):
    call_id: str
    function: str
    risk: Risk
    arguments: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class ToolCallApproved(Event):
    call_id: str
    decided_by: DecidedBy


@dataclass(frozen=True, kw_only=True)
class ToolCallDenied(Event):
    """A call refused before it ran: by the user, the policy, a rule, a hook or the round boundary."""

    call_id: str
    decided_by: DecidedBy
    reason: str = ""
    error_kind: ErrorKind = ErrorKind.DENIED


@dataclass(frozen=True, kw_only=True)
class ToolCallStarted(Event):
    call_id: str
    function: str
    tool: str
    action: str
    arguments: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class ToolCallProgress(Event):
    call_id: str
    fraction: float | None
    message: str


@dataclass(frozen=True, kw_only=True)
class ToolCallFinished(Event):
    call_id: str
    function: str
    tool: str
    action: str
    status: ToolStatus  # success | error | timeout | denied | cancelled
    output: str  # what the model sees (already capped)
    duration_ms: float
    files: list[str] = field(default_factory=list)
    error: str = ""
    truncated: bool = False
    error_kind: ErrorKind | None = None  # None when it succeeded
    decided_by: DecidedBy | None = None  # None when no decision was needed before it failed
    risk: Risk | None = None  # None for an unknown function
    waited_ms: float | None = None  # of duration_ms, the wait for the user's approval (None: not measured)


@dataclass(frozen=True, kw_only=True)
class UsageReported(Event):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    round: int = 0
    estimated: bool = False  # the endpoint sent no usage: counted from the text (agent/usage.py), shown with "≈"
    provider: str = ""  # the saved provider configuration that answered
    model: str = ""


@dataclass(frozen=True, kw_only=True)
class ImagesNotShown(Event):
    """A tool returned images (a screenshot, an MCP picture) the model cannot see: it got their paths only."""

    model: str
    files: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class ErrorOccurred(Event):
    message: str  # one line, for the user
    kind: str = "error"  # auth | connection | timeout | incomplete | bad_data | rate_limit | server | tools_unsupported
    # | bad_request | not_configured | internal
    retryable: bool = False


@dataclass(frozen=True, kw_only=True)
class TurnDone(Event):
    reason: DoneReason
    text: str = ""  # the final answer (may be empty)
    rounds: int = 0
    message: str = ""  # why it stopped, for the user, when not completed


AnyEvent = (
    RoundStarted
    | TextDelta
    | ReasoningDelta
    | ReasoningRetracted
    | ToolsWithheld
    | AssistantMessage
    | ToolCallRequested
    | ToolCallAwaitingApproval
    | ToolCallApproved
    | ToolCallDenied
    | ToolCallStarted
    | ToolCallProgress
    | ToolCallFinished
    | UsageReported
    | ErrorOccurred
    | TurnDone
)
