"""Approvals: which calls need a person's yes, and the interface the CLI and GUI implement to ask.

The :class:`ApprovalPolicy` maps (origin, risk) to allow / ask / deny. A call that needs asking goes to
the :class:`ApprovalGate` passed to ``Dispatcher.dispatch`` (the runtime holds the front end's gate and
passes it for every turn); "allow for this session" is remembered per session and tool action. A request
from the phone or a schedule is stricter than one typed at the desktop.

Provenance (#13): once untrusted content is in the conversation, a call whose effects tools.json lists in
``safety.after_untrusted`` (egress, persistence, reading private data) is asked about whatever its risk,
"always allow" rules and session approvals; only a ``deny`` still wins. The request then carries the
effects that made it ask (:attr:`ApprovalRequest.gated`) and the untrusted sources (:attr:`sources`), so
the front end can say why ("this chat read a web page; sending data out now needs your OK").

"Always allow" is an :class:`AllowRule` with an explicit scope: this action of this tool; this action in a
folder (every path argument inside it); every tool of an MCP server. Rules live in the settings
(``agent.approvals.always``), are listed and revocable in Settings, and decide as ``DecidedBy.RULE``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.toolkit.base import Origin, Risk
from weclaw_desktop.toolkit.effects import EffectHit
from weclaw_desktop.toolkit.manifest import LocalizedText
from weclaw_desktop.toolkit.outcome import ApprovalDecision, DecidedBy
from weclaw_desktop.toolkit.pathclass import within
from weclaw_desktop.toolkit.provenance import UntrustedSource

Rule = Literal["allow", "ask", "deny"]

__all__ = [  # ApprovalDecision and DecidedBy live in outcome.py; re-exported so the approval API is one import
    "AllowRule",
    "ApprovalDecision",
    "ApprovalGate",
    "ApprovalPolicy",
    "ApprovalRequest",
    "ApprovalResult",
    "AutoApprove",
    "AutoDeny",
    "DecidedBy",
    "Rule",
    "Scope",
    "SessionApprovals",
    "scope_folder",
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
    reason: str = ""  # why a hook asks (free text); provenance reasons are in ``gated``/``sources``
    effects: tuple[EffectHit, ...] = ()  # what this call does, from tools.json (for the summary)
    gated: tuple[EffectHit, ...] = ()  # the effects that make it ask because untrusted content came in
    sources: tuple[UntrustedSource, ...] = ()  # that untrusted content
    paths: tuple[str, ...] = ()  # the call's path arguments, absolute (folder scopes, the summary)
    mcp_server: str = ""  # the MCP server whose tool this is ('' for built-in tools)
    summary: LocalizedText | None = None  # what will happen, in plain words (set when the gate is asked)

    @property
    def after_untrusted(self) -> bool:
        return bool(self.gated)


@dataclass(frozen=True)
class ApprovalResult:
    decision: ApprovalDecision
    decided_by: DecidedBy
    note: str = ""
    remember: AllowRule | None = None  # the user chose "always allow" with this scope (the front end stores it)

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


Scope = Literal["function", "folder", "server"]


class AllowRule(BaseModel):
    """ "Always allow", with its scope: ``function`` (this action of this tool), ``folder`` (this action
    when every path argument lies in ``folder``), ``server`` (every tool of this MCP server)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scope: Scope
    tool: str
    function: str = ""
    folder: str = ""
    created: str = ""

    def matches(self, req: ApprovalRequest) -> bool:
        if self.tool != req.tool:
            return False
        if self.scope == "server":
            return bool(req.mcp_server)
        if self.function != req.function:
            return False
        if self.scope == "function":
            return True
        if not self.folder or not req.paths:
            return False
        root = Path(os.path.normpath(self.folder))
        real_root = Path(os.path.realpath(root))
        return all(
            within(Path(os.path.normpath(p)), root) and within(Path(os.path.realpath(p)), real_root) for p in req.paths
        )

    def same_as(self, other: AllowRule) -> bool:
        return (self.scope, self.tool, self.function, self.folder) == (
            other.scope,
            other.tool,
            other.function,
            other.folder,
        )


def scope_folder(req: ApprovalRequest) -> str:
    """The folder an "always allow in this folder" rule covers: the first path's folder (itself if it is
    a folder), or the deepest folder all paths share."""
    if not req.paths:
        return ""
    folders = [p if os.path.isdir(p) else os.path.dirname(p) for p in req.paths]
    try:
        return os.path.commonpath(folders)
    except ValueError:  # different drives
        return folders[0]


class ApprovalPolicy(BaseModel):
    """Per origin and risk: allow, ask or deny. ``remembered`` are "always allow" choices (revocable)."""

    model_config = ConfigDict(extra="forbid")

    rules: dict[str, dict[str, Rule]] = Field(default_factory=_default_rules)
    remembered: list[str] = Field(default_factory=list, description="function names always allowed")
    tool_rules: dict[str, Rule] = Field(
        default_factory=dict, description="per tool or function overrides, e.g. {'mcp_github': 'ask'}"
    )
    always: list[AllowRule] = Field(default_factory=list, description="scoped 'always allow' rules (revocable)")

    def allow_rule_for(self, req: ApprovalRequest) -> AllowRule | None:
        """The "always allow" rule that covers ``req`` (a function in ``remembered`` counts as one)."""
        if req.function in self.remembered:
            return AllowRule(scope="function", tool=req.tool, function=req.function)
        return next((r for r in self.always if r.matches(req)), None)

    def with_rule(self, rule: AllowRule) -> ApprovalPolicy:
        kept = [r for r in self.always if not r.same_as(rule)]
        return self.model_copy(update={"always": [*kept, rule]})

    def without_rule(self, rule: AllowRule) -> ApprovalPolicy:
        return self.model_copy(
            update={
                "always": [r for r in self.always if not r.same_as(rule)],
                "remembered": [f for f in self.remembered if not (rule.scope == "function" and f == rule.function)],
            }
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
