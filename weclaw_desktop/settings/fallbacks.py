"""What the store uses when a field of settings.json cannot be read: the fail-closed table.

Most fields fall back to their default. A restriction never does when its default is looser than what
the user may have written; it gets a stricter value instead (and the problem names the effect):

=====================================  ==========================================================
field that cannot be read              what is used
=====================================  ==========================================================
tools.policy (deny, disabled, profile,  ``disabled_risks = [medium, high]``: every tool with a
disabled_risks, or the whole policy)   medium- or high-risk action is off (the user's switches and
                                       deny list are unknown); the user may switch one back on
tools.policy.allow / .enabled          ``[]`` (allow-lists: the default is already the strictest)
agent.approvals.rules (a cell, an      that cell (every cell of that origin / of all origins):
origin, or all)                        low -> allow, medium/high -> ask; origin schedule -> deny
agent.approvals.tool_rules             ``{}`` and every rule at least as strict as the row above
agent.approvals.remembered             ``[]``: nothing is allowed without asking because it was remembered
agent.approvals (whole)                all three of the above
tools.allowed_roots                    ``[<outputs folder>]``: no file access outside it
a whole section or the whole file      the rows above for the restrictions inside it, defaults elsewhere
=====================================  ==========================================================

A fallback gets the dict of values collected so far for its model (it may set sibling fields, as the
policy lock does) and returns a short text of what it used.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from weclaw_desktop.toolkit.approval import Rule

Values = dict[str, Any]
STRICTNESS: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}
RISKS = ("low", "medium", "high")
ORIGINS = ("gui", "cli", "companion", "schedule")
LOCKED_RISKS = ["medium", "high"]


@dataclass(frozen=True)
class Context:
    """What a fallback may need to know: the default outputs folder (``paths.outputs``)."""

    outputs_dir: Path


@dataclass(frozen=True)
class Fallback:
    effect: str  # a key of problems.EFFECTS, or ''
    apply: Callable[[Values, Context], str]


def strict_rule(origin: str, risk: str) -> Rule:
    """The rule used for one (origin, risk) cell that cannot be read."""
    if risk == "low":
        return "allow"
    return "deny" if origin == "schedule" else "ask"


def strict_cells(origin: str) -> dict[str, Rule]:
    return {risk: strict_rule(origin, risk) for risk in RISKS}


def strict_rules() -> dict[str, dict[str, Rule]]:
    return {origin: strict_cells(origin) for origin in ORIGINS}


def stricter(rules: dict[str, dict[str, Rule]]) -> dict[str, dict[str, Rule]]:
    """Every cell of ``rules`` made at least as strict as the fallback table (for unknown tool rules)."""
    out = {origin: dict(cells) for origin, cells in rules.items()}
    for origin in {*ORIGINS, *out}:
        cells = out.setdefault(origin, {})
        for risk in RISKS:
            strict = strict_rule(origin, risk)
            have = cells.get(risk, strict)
            cells[risk] = have if STRICTNESS[have] >= STRICTNESS[strict] else strict
    return out


def _lock_tools(values: Values, _ctx: Context) -> str:
    # ``values`` holds only the fields that validated: the unreadable one is at its default
    have = list(values.get("disabled_risks", []))
    values["disabled_risks"] = sorted({*have, *LOCKED_RISKS}, key=RISKS.index)
    return "using its default and switching off medium- and high-risk tools"


def _whole_policy(values: Values, _ctx: Context) -> str:
    from weclaw_desktop.toolkit.policy import Policy

    values["policy"] = Policy(disabled_risks=["medium", "high"])
    return "using the default policy with medium- and high-risk tools switched off"


def _empty(name: str) -> Callable[[Values, Context], str]:
    def apply(values: Values, _ctx: Context) -> str:
        values[name] = []
        return "using none"

    return apply


def _tool_rules(values: Values, _ctx: Context) -> str:
    values["tool_rules"] = {}
    values["rules"] = stricter(values.get("rules", strict_rules()))
    return "using no per-tool rules, and the stricter approval rules"


def _whole_approvals(values: Values, _ctx: Context) -> str:
    from weclaw_desktop.toolkit.approval import ApprovalPolicy

    values["approvals"] = ApprovalPolicy(rules=strict_rules(), remembered=[], tool_rules={})
    return "using the stricter approval rules, nothing remembered"


def _roots(values: Values, ctx: Context) -> str:
    chosen = values.get("outputs_dir")  # a valid outputs_dir of the same file is the user's outputs folder
    outputs = Path(chosen).expanduser() if isinstance(chosen, str) and chosen else ctx.outputs_dir
    values["allowed_roots"] = [str(outputs)]
    return f"using only the outputs folder ({outputs})"


#: Keyed by the field's path; a whole-section problem applies every entry under that section.
FALLBACKS: dict[tuple[str, ...], Fallback] = {
    ("tools", "policy"): Fallback("tools-locked", _whole_policy),
    ("tools", "policy", "deny"): Fallback("tools-locked", _lock_tools),
    ("tools", "policy", "disabled"): Fallback("tools-locked", _lock_tools),
    ("tools", "policy", "profile"): Fallback("tools-locked", _lock_tools),
    ("tools", "policy", "disabled_risks"): Fallback("tools-locked", _lock_tools),
    ("tools", "policy", "allow"): Fallback("", _empty("allow")),
    ("tools", "policy", "enabled"): Fallback("", _empty("enabled")),
    ("tools", "allowed_roots"): Fallback("roots-outputs", _roots),
    ("agent", "approvals"): Fallback("approvals-strict", _whole_approvals),
    ("agent", "approvals", "tool_rules"): Fallback("approvals-strict", _tool_rules),
    ("agent", "approvals", "remembered"): Fallback("remembered-cleared", _empty("remembered")),
}
