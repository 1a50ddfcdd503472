"""Approvals: which calls need a person's yes, and the interface the CLI and GUI implement to ask.

The :class:`ApprovalPolicy` maps (origin, risk) to allow / ask / deny. A call that needs asking goes to
the :class:`ApprovalGate` passed to ``Dispatcher.dispatch`` (the runtime holds the front end's gate and
passes it for every turn); "allow for this session" is remembered per session and tool action. A request
from the phone or a schedule is stricter than one typed at the desktop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.toolkit.base import Origin, Risk
from weclaw_desktop.toolkit.outcome import ApprovalDecision, DecidedBy

Rule = Literal["allow", "ask", "deny"]

__all__ = [  # ApprovalDecision and DecidedBy live in outcome.py; re-exported so the approval API is one import
    "ApprovalDecision",
    "ApprovalGate",
    "ApprovalPolicy",
    "ApprovalRequest",
    "ApprovalResult",
    "AutoApprove",
    "AutoDeny",
    "DecidedBy",
    "Rule",
    "SessionApprovals",
]


@dataclass(frozen=True)
class ApprovalRequest:
    tool: str
    action: str
    function: str
    arguments: dict[str, Any]
    risk: Risk
    origin: Origin
    session_id: str
    call_id: str = ""
    reason: str = ""


@dataclass(frozen=True)
class ApprovalResult:
    decision: ApprovalDecision
    decided_by: DecidedBy
    note: str = ""

    def __post_init__(self) -> None:
        # A gate written elsewhere (a plugin) may give the plain values ("user", "deny"): check and type them.
        object.__setattr__(self, "decision", ApprovalDecision(self.decision))
        object.__setattr__(self, "decided_by", DecidedBy(self.decided_by))


class ApprovalGate(Protocol):
    """Asks a person. The CLI prompts on the terminal; the GUI shows a non-modal dialog and awaits it."""

    async def request(self, req: ApprovalRequest) -> ApprovalResult: ...


def _default_rules() -> dict[str, dict[str, Rule]]:
    return {
        "gui": {"low": "allow", "medium": "allow", "high": "ask"},
        "cli": {"low": "allow", "medium": "allow", "high": "ask"},
        "companion": {"low": "allow", "medium": "ask", "high": "ask"},
        "schedule": {"low": "allow", "medium": "ask", "high": "deny"},
    }


class ApprovalPolicy(BaseModel):
    """Per origin and risk: allow, ask or deny. ``remembered`` are "always allow" choices (revocable)."""

    model_config = ConfigDict(extra="forbid")

    rules: dict[str, dict[str, Rule]] = Field(default_factory=_default_rules)
    remembered: list[str] = Field(default_factory=list, description="function names always allowed")
    tool_rules: dict[str, Rule] = Field(
        default_factory=dict, description="per tool or function overrides, e.g. {'mcp_github': 'ask'}"
    )

    def rule_for(self, req: ApprovalRequest) -> Rule:
        return self.decide(req)[0]

    def decide(self, req: ApprovalRequest) -> tuple[Rule, DecidedBy]:
        """The rule for ``req`` and where it comes from: a tool rule (RULE) or the origin x risk table."""
        base = self._base(req)
        for key in (req.function, req.tool):
            if key in self.tool_rules:
                # An override can only make a call stricter than a 'deny' from the origin rules.
                return ("deny", DecidedBy.POLICY) if base == "deny" else (self.tool_rules[key], DecidedBy.RULE)
        return base, DecidedBy.POLICY

    def _base(self, req: ApprovalRequest) -> Rule:
        by_risk = self.rules.get(req.origin.value, _default_rules()["companion"])
        return by_risk.get(req.risk.value, "ask")


@dataclass
class SessionApprovals:
    """ "Allow for this session" memory: session id -> function names."""

    allowed: dict[str, set[str]] = field(default_factory=dict)

    def remember(self, session_id: str, function: str) -> None:
        self.allowed.setdefault(session_id, set()).add(function)

    def is_allowed(self, session_id: str, function: str) -> bool:
        return function in self.allowed.get(session_id, set())

    def forget(self, session_id: str | None = None) -> None:
        if session_id is None:
            self.allowed.clear()
        else:
            self.allowed.pop(session_id, None)


class AutoApprove:
    """A gate that says yes to everything (``weclaw chat --yes``, tests)."""

    async def request(self, req: ApprovalRequest) -> ApprovalResult:
        return ApprovalResult(ApprovalDecision.ALLOW_ONCE, decided_by=DecidedBy.AUTO)


class AutoDeny:
    """A gate that says no to everything (``--deny-risky``, unattended runs)."""

    async def request(self, req: ApprovalRequest) -> ApprovalResult:
        return ApprovalResult(ApprovalDecision.DENY, decided_by=DecidedBy.AUTO, note="risky calls are denied")
