"""The planner: which tools may be offered right now, and why the others may not.

It reads only tools.json and the registry's state (no tool module is imported), so it is cheap enough
to run every round: well under a millisecond at 200 tools (``bench/registry.py``). Availability
expressions and the policy are compiled once and cached; planning walks prepared closures.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from weclaw_desktop.toolkit.availability import (
    AllOf,
    AvailabilityContext,
    BridgeReq,
    Requirement,
    compile_requirement,
    evaluate,
)
from weclaw_desktop.toolkit.diagnostics import Code, Diagnostic
from weclaw_desktop.toolkit.policy import Policy
from weclaw_desktop.toolkit.registry import ToolRegistry

PolicyCheck = Callable[[str], Diagnostic | None]


class ContractError(RuntimeError):
    """A tool passed every check but nothing can execute it: a bug, not a user problem."""


@dataclass
class Plan:
    visible: list[str] = field(default_factory=list)
    hidden: dict[str, list[Diagnostic]] = field(default_factory=dict)
    hidden_functions: dict[str, list[Diagnostic]] = field(default_factory=dict)

    def is_visible(self, tool: str) -> bool:
        return tool in self.visible


def tool_requirement(registry: ToolRegistry, tool: str) -> Requirement | None:
    """The tool's ``requires`` plus one ``bridge`` signal per bridge it declares."""
    spec = registry.spec(tool)
    parts: list[Requirement] = [BridgeReq(bridge=b) for b in spec.bridges]
    if spec.requires is not None:
        parts.append(spec.requires)
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else AllOf.model_validate({"allOf": parts})


_DISABLED = [Diagnostic.of(Code.DISABLED_IN_MANIFEST, "disabled")]


@dataclass(frozen=True)
class _Entry:
    """What planning needs of one tool, prepared once per registry state (``ToolRegistry.prepared``)."""

    name: str
    enabled: bool
    check: Callable[[AvailabilityContext], list[Diagnostic]]
    dynamic: bool
    executable: bool
    action_requires: bool
    max_risk: str  # the highest risk of its actions (the policy's ``disabled_risks`` is keyed on it)


def _entry(registry: ToolRegistry, tool: str) -> _Entry:
    spec = registry.spec(tool)
    risks = [spec.risk_of(a) for a in spec.actions] or [spec.risk]
    return _Entry(
        name=tool,
        enabled=spec.enabled,
        check=compile_requirement(tool_requirement(registry, tool), tool),
        dynamic=registry.is_dynamic(tool),
        executable=not spec.enabled or (registry.has_functions(tool) and registry.module_findable(tool)),
        action_requires=bool(spec.action_requires),
        max_risk=max(risks, key=lambda r: r.rank).value,
    )


def policy_check(registry: ToolRegistry, policy: Policy) -> PolicyCheck:
    """The policy compiled for this registry (profiles from tools.json, each tool's highest risk)."""
    return policy.compiled(registry.manifest.profiles, lambda tool: registry.prepared(tool, _entry).max_risk)


def _diagnose_entry(
    registry: ToolRegistry, check: PolicyCheck, ctx: AvailabilityContext, entry: _Entry
) -> list[Diagnostic]:
    if not entry.enabled:
        return _DISABLED
    blocked = check(entry.name)
    if blocked is not None:
        return [blocked]
    result = entry.check(ctx)
    return result + registry.live_diagnostics(entry.name) if entry.dynamic else result


def diagnose(
    registry: ToolRegistry, policy: Policy | PolicyCheck, ctx: AvailabilityContext, tool: str
) -> list[Diagnostic]:
    """Why ``tool`` cannot be offered now (empty: it can). ``policy`` may be a compiled checker."""
    check = policy_check(registry, policy) if isinstance(policy, Policy) else policy
    return _diagnose_entry(registry, check, ctx, registry.prepared(tool, _entry))


def diagnose_action(registry: ToolRegistry, ctx: AvailabilityContext, tool: str, action_name: str) -> list[Diagnostic]:
    """Why one action of an otherwise visible tool cannot be offered (``action_requires``)."""
    req = registry.spec(tool).action_requires.get(action_name)
    return evaluate(req, tool, ctx) if req is not None else []


def effective_context(registry: ToolRegistry, ctx: AvailabilityContext | None = None) -> AvailabilityContext:
    """``ctx`` with the registry's injected bridges added and its effective tool configs."""
    base = ctx or AvailabilityContext()
    return replace(base, bridges=base.bridges | registry.bridge_names(), tool_config=registry.config_view)


def plan(
    registry: ToolRegistry,
    policy: Policy,
    ctx: AvailabilityContext | None = None,
    *,
    tools: Iterable[str] | None = None,
) -> Plan:
    """Split ``tools`` (default: every declared tool) into visible and hidden with diagnostics.

    ``ctx.bridges`` is taken from the registry, and ``ctx.tool_config`` from its effective configs.
    This is the first step of the one exposure computation (``toolkit/exposure.py``); callers that want
    "what can be offered now" use :class:`~weclaw_desktop.toolkit.exposure.ExposurePlanner`.
    """
    ctx = effective_context(registry, ctx)
    result = Plan()
    names = registry.tool_names(include_disabled=True) if tools is None else list(tools)
    check = policy_check(registry, policy)
    for tool in names:
        entry = registry.prepared(tool, _entry)
        problems = _diagnose_entry(registry, check, ctx, entry)
        if problems:
            result.hidden[tool] = problems
            continue
        if not entry.executable:
            raise ContractError(
                f"tool '{tool}' is visible but has no executor (module '{registry.spec(tool).module}' "
                "not found or no functions); run `weclaw validate`"
            )
        result.visible.append(tool)
        if not entry.action_requires:
            continue
        spec = registry.spec(tool)
        for action_name in spec.action_requires:
            problems = diagnose_action(registry, ctx, tool, action_name)
            if problems:
                result.hidden_functions[f"{tool}_{action_name}"] = problems
        if all(f"{tool}_{a}" in result.hidden_functions for a in spec.actions):
            result.visible.remove(tool)
            result.hidden[tool] = [d for a in spec.actions for d in result.hidden_functions[f"{tool}_{a}"]]
    return result
