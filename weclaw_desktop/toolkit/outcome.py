"""How a tool call ended, as types: who decided, what went wrong, and the result the model reads.

Every call the model asks for ends in one :class:`CallOutcome`, whether the dispatcher ran it, refused it
or the agent loop stopped it (loop guard). Front ends, the audit and the exposure read the enums here;
nothing branches on the text of a message. Each enum's values are stable strings: they are stored in the
audit table and printed by ``weclaw chat --json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from weclaw_desktop.toolkit.base import Risk, ToolResult, ToolStatus


class ApprovalDecision(StrEnum):
    """The answer to "may this call run?"."""

    ALLOW_ONCE = "allow_once"
    ALLOW_SESSION = "allow_session"
    ALLOW_ALWAYS = "allow_always"  # with a scope (ApprovalResult.remember): stored as an AllowRule
    DENY = "deny"

    @property
    def allowed(self) -> bool:
        return self is not ApprovalDecision.DENY


class DecidedBy(StrEnum):
    """Who decided whether a call may run (or, for a refusal before approval, who refused it).

    - ``USER``: a person answered the approval gate (the GUI dialog, the terminal prompt).
    - ``POLICY``: the user's settings decided without asking: the approval table (origin x risk said allow
      or deny), or the tool policy (the tool is switched off, on the deny list or outside the profile).
    - ``RULE``: a per-tool or per-function approval rule (``ApprovalPolicy.tool_rules``).
    - ``REMEMBERED``: an "always allow" the user chose earlier (an ``AllowRule`` in ``ApprovalPolicy.always``,
      or a function in ``ApprovalPolicy.remembered``).
    - ``SESSION``: "allow for this session" chosen earlier in the same session.
    - ``HOOK``: a before hook blocked the call (the hook's name is in ``CallOutcome.hook``).
    - ``NO_GATE``: the call needed a person but there is no one to ask (no gate), so it was denied.
    - ``AUTO``: an automatic gate answered: ``AutoApprove`` (``weclaw chat --yes``) or ``AutoDeny``.
    - ``CIRCUIT``: the circuit breaker: the tool failed too often in a row in this turn.
    - ``LOOP_GUARD``: the loop guard: the same call with the same arguments was repeated too often.
    - ``EXPOSURE``: the function exists but was not offered to the model in this round.
    """

    USER = "user"
    POLICY = "policy"
    RULE = "rule"
    REMEMBERED = "remembered"
    SESSION = "session"
    HOOK = "hook"
    NO_GATE = "no-gate"
    AUTO = "auto"
    CIRCUIT = "circuit"
    LOOP_GUARD = "loop-guard"
    EXPOSURE = "exposure"


class ErrorKind(StrEnum):
    """Why a call did not succeed, one kind per place in the pipeline that can stop it.

    - ``UNKNOWN_FUNCTION``: no function of that name exists.
    - ``NOT_OFFERED``: the function exists but was not offered in this round (find it with tool_search).
    - ``UNAVAILABLE``: the tool cannot run on this machine now (a bridge, a key, a setting is missing).
    - ``DISABLED``: the tool is switched off (by the user, the deny list, the profile or tools.json).
    - ``LOAD_FAILED``: the tool's module or class cannot be loaded (a broken installation).
    - ``INVALID_JSON``: the arguments are not one JSON object.
    - ``INVALID_ARGUMENTS``: the arguments do not match the function's parameters.
    - ``DENIED``: the approval gate, the approval policy, a rule or a hook said no.
    - ``HOOK_FAILED``: a hook raised or produced invalid arguments.
    - ``TIMEOUT``: the tool did not finish within its timeout and was stopped.
    - ``TOOL_ERROR``: the tool ran and reported a failure (an expected one: a missing file, a refusal).
    - ``TOOL_CRASHED``: the tool raised an unexpected exception or returned something that is not a result.
    - ``CANCELLED``: the user stopped the call (Stop), or the tool reported it was cancelled.
    - ``CIRCUIT_OPEN``: the tool failed too often in a row in this turn and is switched off for the turn.
    - ``LOOP_GUARD``: the same call with the same arguments was repeated too often; the turn stops.
    - ``INTERNAL``: a bug in the pipeline itself (logged with its traceback).
    """

    UNKNOWN_FUNCTION = "unknown-function"
    NOT_OFFERED = "not-offered"
    UNAVAILABLE = "unavailable"
    DISABLED = "disabled"
    LOAD_FAILED = "load-failed"
    INVALID_JSON = "invalid-json"
    INVALID_ARGUMENTS = "invalid-arguments"
    DENIED = "denied"
    HOOK_FAILED = "hook-failed"
    TIMEOUT = "timeout"
    TOOL_ERROR = "tool-error"
    TOOL_CRASHED = "tool-crashed"
    CANCELLED = "cancelled"
    CIRCUIT_OPEN = "circuit-open"
    LOOP_GUARD = "loop-guard"
    INTERNAL = "internal"


#: The error kind a result reported by the tool itself (or an after hook) maps to, by its status.
_BY_STATUS: dict[ToolStatus, ErrorKind | None] = {
    ToolStatus.SUCCESS: None,
    ToolStatus.ERROR: ErrorKind.TOOL_ERROR,
    ToolStatus.TIMEOUT: ErrorKind.TIMEOUT,
    ToolStatus.DENIED: ErrorKind.DENIED,
    ToolStatus.CANCELLED: ErrorKind.CANCELLED,
}


def kind_of_status(status: ToolStatus) -> ErrorKind | None:
    """The error kind of a result whose status the tool set itself (None for success)."""
    return _BY_STATUS[status]


@dataclass(frozen=True)
class CallOutcome:
    """One call, ended: the :class:`ToolResult` the model reads plus typed facts about how it ended.

    ``tool``/``action`` are empty and ``risk`` is None when the function is unknown. ``decided_by`` and
    ``approval`` are None when no decision was made (the call failed before approval). ``error`` is None
    exactly when the call succeeded. ``ran`` says whether the tool's own code was started. ``waited_ms`` is
    the part of ``result.duration_ms`` spent waiting for a person at the approval gate (0 when no one was
    asked; None when not measured: an outcome the agent loop made up for a call that did not finish).
    """

    call_id: str
    function: str
    result: ToolResult
    tool: str = ""
    action: str = ""
    risk: Risk | None = None
    decided_by: DecidedBy | None = None
    approval: ApprovalDecision | None = None
    error: ErrorKind | None = None
    note: str = ""  # the decider's note (e.g. "denied at the terminal"), for people
    hook: str = ""  # the hook that blocked the call (decided_by HOOK)
    ran: bool = False
    waited_ms: float | None = None

    def __post_init__(self) -> None:
        if (self.error is None) != self.result.succeeded:
            raise ValueError(f"outcome of {self.function}: error {self.error} with status {self.result.status}")

    @property
    def status(self) -> ToolStatus:
        return self.result.status

    @property
    def succeeded(self) -> bool:
        return self.result.succeeded
