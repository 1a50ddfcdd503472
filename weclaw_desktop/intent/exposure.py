"""Progressive exposure: which tools the model sees in each round of a turn.

At the start of a turn the request is routed once (:class:`IntentEngine`). Every round then builds the
tool list from, in priority order:

1. always-on tools (``tool_search``);
2. tools ``tool_search`` found earlier in this turn (the model asked for them), and MCP servers the
   request itself asks for (their keywords, names, tool names or descriptions: ``intent/dynamic.py``);
3. the routed tools (recommended, or recommended + alternative in the expanded tier);
4. alternatives added after a call failed, timed out or was denied (widening);
5. without the conversation: tools used in the user's last ``sticky_turns`` turns, for follow-ups ("再发一次",
   "send it again"). With it (``TurnRequest.conversation``) the route itself carries what a follow-up refers
   to (``Route.carried``), and a "thanks" carries nothing;

and each tool brings its ``depends_on`` tools right after it (listed in ``needed_by``). Only tools the
planner says are visible are kept; at most ``max_tools_per_request`` tools come from routing, widening and
stickiness together (found tools and dependencies do not count against it). The turn returns the tools in
priority order; the one exposure computation (``toolkit/exposure.py``) then takes whole tools in that
order while they fit in ``max_functions`` (128) functions, so the cap is enforced there, once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from weclaw_desktop.intent.api import RoundExposure, TurnRequest
from weclaw_desktop.intent.dynamic import DynamicRoutes
from weclaw_desktop.intent.engine import EXPANDED, IntentEngine, Route
from weclaw_desktop.toolkit.base import ToolResult, ToolStatus
from weclaw_desktop.toolkit.exposure import ALWAYS, EveryVisible
from weclaw_desktop.toolkit.registry import ToolRegistry

TOOL_SEARCH = "tool_search"
WIDEN_ON = frozenset({ToolStatus.ERROR, ToolStatus.TIMEOUT, ToolStatus.DENIED})

FOUND = "found by tool_search"
STICKY = "used in a recent turn"

__all__ = ["ALWAYS", "FOUND", "STICKY", "AllExposer", "ProgressiveExposer", "ProgressiveTurn", "always_on"]


class _Picker:
    """Lists visible tools in priority order, each followed by its dependencies (no function cap here)."""

    def __init__(self, registry: ToolRegistry, visible: Sequence[str]) -> None:
        self.registry = registry
        self.visible = set(visible)
        self.tools: list[str] = []
        self.reasons: dict[str, str] = {}
        self.dropped: dict[str, str] = {}
        self.needed_by: dict[str, str] = {}

    def add(self, tool: str, reason: str, needed_by: str = "") -> bool:
        if tool in self.reasons or tool in self.dropped:
            return tool in self.reasons
        if tool not in self.visible:
            self.dropped[tool] = f"{reason}, but not available now"
            return False
        self.tools.append(tool)
        self.reasons[tool] = reason
        if needed_by:
            self.needed_by[tool] = needed_by
        return True

    def add_with_deps(self, tool: str, reason: str) -> bool:
        added = self.add(tool, reason)
        if added:
            for dep in _dependencies(self.registry, tool):
                self.add(dep, f"needed by {tool}", needed_by=tool)
        return added


def _dependencies(registry: ToolRegistry, tool: str) -> list[str]:
    """``depends_on`` of ``tool``, transitively, in declaration order."""
    out: list[str] = []
    stack = [tool]
    while stack:
        current = stack.pop()
        try:
            deps = registry.spec(current).depends_on
        except KeyError:
            continue
        for dep in deps:
            if dep != tool and dep not in out:
                out.append(dep)
                stack.append(dep)
    return out


def always_on(registry: ToolRegistry) -> list[str]:
    return [t for t in registry.tool_names() if registry.spec(t).always_on]


class _AlwaysOn:
    """``always_on(registry)``, recomputed only after the registry changed."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        self._tools: list[str] | None = None
        registry.add_listener(self._reset)

    def _reset(self) -> None:
        self._tools = None

    def get(self) -> list[str]:
        if self._tools is None:
            self._tools = always_on(self.registry)
        return self._tools


class ProgressiveTurn:
    """One user turn: the route is fixed, the exposure grows with what happens in the turn."""

    def __init__(
        self,
        registry: ToolRegistry,
        engine: IntentEngine,
        route: Route,
        sticky: list[str],
        always: list[str],
        dynamic: dict[str, str] | None = None,
    ) -> None:
        self.registry = registry
        self.dynamic = dynamic or {}  # MCP servers the request asks for -> why
        self.always = always
        self.engine = engine
        self.route = route
        self.sticky = sticky
        self.found: list[str] = []
        self.found_functions: list[str] = []  # an MCP server's functions tool_search named (offered first)
        self.widened: dict[str, str] = {}

    def for_round(self, visible: Sequence[str]) -> RoundExposure:
        settings = self.engine.settings
        picker = _Picker(self.registry, visible)
        for tool in self.always:
            picker.add_with_deps(tool, ALWAYS)
        for tool in self.found:
            picker.add_with_deps(tool, FOUND)
        for tool, reason in self.dynamic.items():
            picker.add_with_deps(tool, reason)
        budget = settings.max_tools_per_request
        ranked: list[tuple[str, str]] = [(t, self.route.reasons.get(t, "routed")) for t in self.route.tools]
        ranked += self._stand_ins(picker.visible)
        ranked += list(self.widened.items())
        ranked += [(t, STICKY) for t in self.sticky]
        for tool, reason in ranked:
            if budget <= 0:
                if tool not in picker.reasons:
                    picker.dropped.setdefault(
                        tool, f"{reason}, but over the {settings.max_tools_per_request}-tool limit"
                    )
                continue
            if tool in picker.reasons:
                continue
            if picker.add_with_deps(tool, reason):
                budget -= 1
        tier = self.route.tier
        if self.widened and tier != EXPANDED:
            tier = EXPANDED
        return RoundExposure(
            tools=picker.tools,
            tier=tier,
            intents=[s.name for s in self.route.intents],
            confidence=round(self.route.confidence, 3),
            reasons=picker.reasons,
            dropped=picker.dropped,
            needed_by=picker.needed_by,
            prefer=list(self.found_functions),
        )

    def _stand_ins(self, visible: set[str]) -> list[tuple[str, str]]:
        """Alternatives of a routed intent none of whose recommended tools can be offered now (an e-mail
        account not set up, the phone not connected)."""
        out: list[tuple[str, str]] = []
        for s in self.route.intents:
            intent = self.engine.manifest.intents[s.name]
            if not any(t in visible for t in intent.recommended):
                out += [(t, f"alternative in {s.name}: recommended not available now") for t in intent.alternative]
        return out

    def note_result(self, tool: str, action: str, result: ToolResult) -> None:
        if tool == TOOL_SEARCH:
            _note_found(self.registry, result.data, self.found, self.found_functions)
            return
        if result.status in WIDEN_ON:
            for name, intent in self.engine.manifest.intents.items():
                if tool not in intent.tools:
                    continue
                for alt in [*intent.recommended, *intent.alternative]:
                    if alt != tool and alt not in self.widened and alt not in self.route.tools:
                        self.widened[alt] = f"alternative in {name} after {tool} {result.status.value}"


def _found(data: Any, key: str) -> list[str]:
    if isinstance(data, dict):
        names = data.get(key)
        if isinstance(names, list):
            return [t for t in names if isinstance(t, str)]
    return []


def _note_found(registry: ToolRegistry, data: Any, tools: list[str], functions: list[str]) -> None:
    """Add what a tool_search result found: its tools, and the single functions it named (an MCP server's)."""
    for name in _found(data, "tools"):
        if registry.has_tool(name) and name not in tools:
            tools.append(name)
    for fn in _found(data, "functions"):
        if registry.resolve(fn) is not None and fn not in functions:
            functions.append(fn)


class ProgressiveExposer:
    """Exposure mode "progressive" (the default)."""

    def __init__(self, registry: ToolRegistry, engine: IntentEngine | None = None) -> None:
        self.registry = registry
        self.engine = engine or IntentEngine(registry.manifest)
        self._always = _AlwaysOn(registry)
        self._dynamic = DynamicRoutes(registry)

    def start_turn(self, turn: TurnRequest | str) -> ProgressiveTurn:
        """Route the turn once. A bare string is a turn with no earlier tools (tests, ``weclaw intent``)."""
        request = TurnRequest(turn) if isinstance(turn, str) else turn
        route = self.engine.route(request.text, _Enabled(self.registry), context=request.conversation)
        always = self._always.get()
        if request.conversation is not None:
            sticky: list[str] = []  # the route carries what the follow-up refers to (Route.carried)
        else:
            keep = self.engine.settings.sticky_turns
            sticky = _flatten(request.recent_tools[:keep], exclude=set(always))
        # descriptions fill a gap only: when the engine routes nothing and the request is not a question
        dynamic = self._dynamic.match(request.text, descriptions=not (route.question or route.tools))
        return ProgressiveTurn(self.registry, self.engine, route, sticky, always, dynamic)


class _Enabled:
    """Membership test "is this an enabled tool of the registry" without building a set per request."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    def __contains__(self, tool: object) -> bool:
        return isinstance(tool, str) and self.registry.has_tool(tool)

    def __iter__(self) -> Iterator[str]:
        return iter(self.registry.tool_names())

    def __len__(self) -> int:
        return len(self.registry.tool_names())


def _flatten(turns: Iterable[Sequence[str]], exclude: set[str]) -> list[str]:
    out: list[str] = []
    for tools in turns:
        for tool in tools:
            if tool not in exclude and tool not in out:
                out.append(tool)
    return out


class _AllTurn(EveryVisible):
    """Mode "all": every visible tool; what tool_search found comes first (after the always-on tools), so a
    tool or an MCP function the 128-function cap left out can still be reached."""

    def __init__(self, registry: ToolRegistry) -> None:
        super().__init__(registry)
        self.found: list[str] = []
        self.found_functions: list[str] = []

    def for_round(self, visible: Sequence[str]) -> RoundExposure:
        routing = super().for_round(visible)
        if self.found or self.found_functions:
            always = [t for t in routing.tools if routing.reasons.get(t) == ALWAYS]
            found = [t for t in self.found if t in routing.tools and t not in always]
            routing.tools = [*always, *found, *(t for t in routing.tools if t not in always and t not in found)]
            routing.reasons.update(dict.fromkeys(found, FOUND))
            routing.prefer = list(self.found_functions)
        return routing

    def note_result(self, tool: str, action: str, result: ToolResult) -> None:
        if tool == TOOL_SEARCH:
            _note_found(self.registry, result.data, self.found, self.found_functions)


class AllExposer:
    """Exposure mode "all": every visible tool, always-on first, every round (capped by the exposure
    computation at ``max_functions`` functions)."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    def start_turn(self, turn: TurnRequest | str) -> _AllTurn:
        return _AllTurn(self.registry)
