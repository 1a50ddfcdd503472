"""The planner: which tools may be offered right now, and why the others may not.

It reads only tools.json and the registry's state (no tool module is imported), so it is cheap enough
to run every round: under a millisecond at 200 tools (``bench/registry.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from weclaw_desktop.toolkit.availability import AllOf, AvailabilityContext, BridgeReq, Requirement, evaluate
from weclaw_desktop.toolkit.diagnostics import Code, Diagnostic
from weclaw_desktop.toolkit.policy import Policy
from weclaw_desktop.toolkit.registry import ToolRegistry


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


def diagnose(registry: ToolRegistry, policy: Policy, ctx: AvailabilityContext, tool: str) -> list[Diagnostic]:
    """Why ``tool`` cannot be offered now (empty: it can)."""
    spec = registry.spec(tool)
    if not spec.enabled:
        return [Diagnostic(code=Code.DISABLED_IN_MANIFEST, message="disabled in tools.json")]
    blocked = policy.check(tool, registry.manifest.profiles)
    if blocked is not None:
        return [blocked]
    return evaluate(tool_requirement(registry, tool), tool, ctx) + registry.live_diagnostics(tool)


def diagnose_action(registry: ToolRegistry, ctx: AvailabilityContext, tool: str, action_name: str) -> list[Diagnostic]:
    """Why one action of an otherwise visible tool cannot be offered (``action_requires``)."""
    req = registry.spec(tool).action_requires.get(action_name)
    return evaluate(req, tool, ctx) if req is not None else []


def plan(
    registry: ToolRegistry,
    policy: Policy,
    ctx: AvailabilityContext | None = None,
    *,
    tools: Iterable[str] | None = None,
) -> Plan:
    """Split ``tools`` (default: every declared tool) into visible and hidden with diagnostics.

    ``ctx.bridges`` is taken from the registry, and ``ctx.tool_config`` from its effective configs.
    """
    base = ctx or AvailabilityContext()
    ctx = replace(base, bridges=base.bridges | registry.bridge_names(), tool_config=registry.effective_config)
    result = Plan()
    names = registry.tool_names(include_disabled=True) if tools is None else list(tools)
    for tool in names:
        problems = diagnose(registry, policy, ctx, tool)
        if problems:
            result.hidden[tool] = problems
            continue
        if not registry.functions_of(tool) or not registry.module_findable(tool):
            raise ContractError(
                f"tool '{tool}' is visible but has no executor (module '{registry.spec(tool).module}' "
                "not found or no functions); run `weclaw validate`"
            )
        result.visible.append(tool)
        spec = registry.spec(tool)
        for action_name in spec.action_requires:
            problems = diagnose_action(registry, ctx, tool, action_name)
            if problems:
                result.hidden_functions[f"{tool}_{action_name}"] = problems
        if spec.action_requires and all(f"{tool}_{a}" in result.hidden_functions for a in spec.actions):
            result.visible.remove(tool)
            result.hidden[tool] = [d for a in spec.actions for d in result.hidden_functions[f"{tool}_{a}"]]
    return result
