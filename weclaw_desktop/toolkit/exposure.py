"""What can be offered to the model now: the one exposure computation, and the boundary it draws.

:meth:`ExposurePlanner.compute` answers "what can be offered in this round" in three steps, each in one
place:

1. visible: the planner (availability + policy, ``toolkit/planner.py``) minus the tools ``blocked`` for
   this turn (the agent loop's circuit breaker); each hidden tool keeps its diagnostics;
2. routed: a :class:`Router` (the intent exposure of the turn, ``intent/exposure.py``) puts the visible
   tools it wants in priority order, with a reason each, and says which it wanted but left out;
3. capped: whole tools are taken in that order while the number of functions stays within
   ``exposure.max_functions`` of tools.json (128, OpenAI's limit). This is the only place the cap is
   enforced; a tool that would cross it is listed in ``dropped`` with the reason. A dynamic tool (an MCP
   server: many independent tools) is not dropped whole: the functions that fit are offered, in the
   server's order (functions ``tool_search`` found this turn first, ``Routing.prefer``), and ``dropped``
   names the rest. ``capped`` lists, per tool, the functions the cap left out, and :func:`cap_note` turns
   it into the line the model reads ("12 tools of MCP server git were left out ... use tool_search").

The result, an :class:`Exposure`, holds the offered tools, their function names and (for a model round)
their OpenAI schemas, the hidden tools with diagnostics and the dropped ones with reasons. The agent loop
sends it to the model and passes it to ``Dispatcher.dispatch`` as the round's boundary: a function not in
it is refused. Callers that are not a model round (tests, UI actions, the self-test) pass
:data:`NO_ROUND` explicitly. The tool panel, tool_search's visible set, ``weclaw tools`` and
``weclaw doctor`` read ``visible``/``hidden`` from the same computation.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from weclaw_desktop.toolkit.availability import AvailabilityContext
from weclaw_desktop.toolkit.diagnostics import Code, Diagnostic
from weclaw_desktop.toolkit.planner import diagnose, diagnose_action, effective_context, plan
from weclaw_desktop.toolkit.policy import Policy
from weclaw_desktop.toolkit.registry import ToolRegistry

log = logging.getLogger("weclaw.exposure")

ALWAYS = "always on"
EVERY = "exposure mode all"


@dataclass
class Routing:
    """What a router wants offered in one round, before the function cap.

    ``tools`` are visible tool names in priority order; ``needed_by`` maps a tool that came along as a
    dependency (``depends_on``) to the tool that brought it, so a dependency is left out with its tool.
    ``dropped`` holds tools the router wanted but did not list (not visible, over its tool budget).
    """

    tools: list[str]
    tier: str = ""  # recommended | expanded | clarify | all
    intents: list[str] = field(default_factory=list)
    confidence: float = 0.0
    reasons: dict[str, str] = field(default_factory=dict)  # tool -> why wanted (intent, sticky, found, ...)
    dropped: dict[str, str] = field(default_factory=dict)  # tool -> why wanted but not listed
    needed_by: dict[str, str] = field(default_factory=dict)  # dependency -> the tool that brought it
    prefer: list[str] = field(default_factory=list)  # functions (tool_search found them) offered first


class Router(Protocol):
    def for_round(self, visible: Sequence[str]) -> Routing:
        """The tools to offer next, chosen from ``visible`` only."""
        ...


class EveryVisible:
    """The router of exposure mode "all" (and of callers without routing): always-on tools first, then
    every visible tool in tools.json order."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    def for_round(self, visible: Sequence[str]) -> Routing:
        always = [t for t in visible if self.registry.spec(t).always_on]
        rest = [t for t in visible if t not in always]
        reasons = {t: ALWAYS for t in always} | {t: EVERY for t in rest}
        return Routing(tools=always + rest, tier="all", reasons=reasons)


@dataclass(frozen=True)
class Exposure:
    """What is offered in one round (see the module docstring). Tool and function names keep their order."""

    visible: tuple[str, ...]  # tools that could be offered now (planner, minus blocked, minus load failures)
    hidden: Mapping[str, tuple[Diagnostic, ...]]  # tool -> why it cannot be offered now
    hidden_functions: Mapping[str, tuple[Diagnostic, ...]]  # single functions of visible tools that cannot
    tools: tuple[str, ...]  # offered tools, in priority order
    functions: tuple[str, ...]  # their function names, as sent to the model
    schemas: tuple[dict[str, Any], ...] = ()  # their OpenAI tool definitions (computed with schemas=True)
    reasons: Mapping[str, str] = field(default_factory=dict)  # offered tool -> why
    dropped: Mapping[str, str] = field(default_factory=dict)  # wanted tool -> why it is not offered
    capped: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # tool -> functions over the cap
    tier: str = ""
    intents: tuple[str, ...] = ()
    confidence: float = 0.0
    max_functions: int = 128
    _offered: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_offered", frozenset(self.functions))

    def offers(self, function: str) -> bool:
        """Whether the model was offered ``function`` in this round."""
        return function in self._offered

    def why_hidden(self, tool: str, function: str = "") -> tuple[Diagnostic, ...]:
        """The diagnostics of a hidden tool, or of one hidden function of a visible tool; () if neither."""
        return self.hidden.get(tool) or self.hidden_functions.get(function, ())


class NoRound:
    """The explicit "not a model round" boundary: the caller is not the model (a test, a UI action, the
    self-test), so any function may be called. Availability, policy, approval and hooks still apply."""

    def offers(self, function: str) -> bool:
        return True

    def __repr__(self) -> str:
        return "NO_ROUND"


#: Pass as ``offered=`` to ``Dispatcher.dispatch`` for a call that does not come from a model round.
NO_ROUND: Final = NoRound()

#: What ``Dispatcher.dispatch`` takes as the round boundary.
Offered = Exposure | NoRound


class ExposurePlanner:
    """The one computation of "what can be offered now". ``policy`` and ``availability`` are read on every
    call, so a settings change applies to the next round at once."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        policy: Callable[[], Policy],
        availability: Callable[[], AvailabilityContext] = AvailabilityContext,
    ) -> None:
        self.registry = registry
        self.policy = policy
        self.availability = availability

    @property
    def max_functions(self) -> int:
        return self.registry.manifest.exposure.max_functions

    def compute(
        self,
        router: Router | None = None,
        *,
        blocked: Mapping[str, Diagnostic] | None = None,
        schemas: bool = False,
    ) -> Exposure:
        """Visible -> routed -> capped. ``router`` None offers every visible tool (mode "all");
        ``blocked`` hides tools or single functions for this turn with the given diagnostic (the circuit
        breaker);
        ``schemas`` builds the OpenAI definitions (imports the offered tools' modules; a model round needs
        them, the panel and the CLI listings do not)."""
        registry = self.registry
        planned = plan(registry, self.policy(), self.availability())
        hidden: dict[str, tuple[Diagnostic, ...]] = {t: tuple(ds) for t, ds in planned.hidden.items()}
        hidden_functions = {f: tuple(ds) for f, ds in planned.hidden_functions.items()}
        visible = planned.visible
        if blocked:  # tools, or single functions (of a dynamic tool, whose functions fail independently)
            visible = [t for t in visible if t not in blocked]
            hidden.update((t, (d,)) for t, d in blocked.items() if t in planned.visible)
            hidden_functions.update(
                (f, (d,)) for f, d in blocked.items() if f not in planned.visible and registry.resolve(f) is not None
            )
        routing = (router or EveryVisible(registry)).for_round(list(visible))
        cap = self.max_functions
        offered: list[str] = []
        names: list[str] = []
        defs: list[dict[str, Any]] = []
        reasons: dict[str, str] = {}
        dropped: dict[str, str] = dict(routing.dropped)
        capped: dict[str, tuple[str, ...]] = {}
        prefer = dict.fromkeys(routing.prefer)
        candidates = set(visible)
        partial: set[str] = set()  # dynamic tools offered in part (the rest over the cap)
        for tool in dict.fromkeys(routing.tools):
            reason = routing.reasons.get(tool) or routing.tier or "routed"
            if tool not in candidates:
                dropped.setdefault(tool, f"{reason}, but not available now")
                continue
            parent = routing.needed_by.get(tool)
            if parent is not None and parent not in reasons:
                dropped[tool] = f"{reason}, but {parent} is not offered"
                continue
            tool_defs: list[dict[str, Any]] = []
            if schemas:
                try:
                    tool_defs = registry.function_defs([tool], exclude=hidden_functions)
                except Exception as exc:  # a broken tool module must not break the round
                    log.error("cannot describe tool %s: %s", tool, exc)
                    hidden[tool] = (Diagnostic(code=Code.LOAD_FAILED, message=f"cannot be loaded: {exc}"),)
                    visible.remove(tool)
                    candidates.discard(tool)
                    continue
                tool_names = [d["function"]["name"] for d in tool_defs]
                for fn in registry.functions_of(tool):  # a function whose schema cannot be sent: hidden alone
                    problem = registry.schema_problem(fn)
                    if problem is not None and fn not in hidden_functions:
                        hidden_functions[fn] = (
                            Diagnostic.of(Code.SCHEMA_INVALID, "schema", "schema", problem=problem),
                        )
            elif hidden_functions:
                tool_names = [f for f in registry.functions_of(tool) if f not in hidden_functions]
            else:
                tool_names = registry.functions_of(tool)
            if len(names) + len(tool_names) > cap:
                room = cap - len(names)
                if room <= 0 or not registry.is_dynamic(tool):
                    dropped[tool] = f"{reason}, but over the {cap}-function limit"
                    capped[tool] = tuple(tool_names)
                    continue
                # a dynamic tool (an MCP server) is many independent tools: offer the ones that fit, in the
                # server's own order (the same in every round; found by tool_search first), and say how
                # many were left out
                if prefer:
                    tool_names, tool_defs = _preferred_first(tool_names, tool_defs, prefer)
                left_out = tool_names[room:]
                capped[tool] = tuple(left_out)
                tool_names, tool_defs = tool_names[:room], tool_defs[:room]
                dropped[tool] = (
                    f"{reason}; {len(left_out)} of its functions are over the {cap}-function limit: "
                    + ", ".join(left_out[:20])
                    + (" ..." if len(left_out) > 20 else "")
                )
                partial.add(tool)
            offered.append(tool)
            names.extend(tool_names)
            defs.extend(tool_defs)
            reasons[tool] = reason
        for tool in offered:
            if tool not in partial:
                dropped.pop(tool, None)
        return Exposure(
            visible=tuple(visible),
            hidden=hidden,
            hidden_functions=hidden_functions,
            tools=tuple(offered),
            functions=tuple(names),
            schemas=tuple(defs),
            reasons=reasons,
            dropped=dropped,
            capped=capped,
            tier=routing.tier,
            intents=tuple(routing.intents),
            confidence=routing.confidence,
            max_functions=cap,
        )

    def diagnose(self, tool: str, action: str) -> list[Diagnostic]:
        """Why one call of ``tool``/``action`` cannot run right now (empty: it can): the same rules as the
        visible step, for one tool, at call time (the state may have changed since the round began)."""
        ctx = effective_context(self.registry, self.availability())
        return diagnose(self.registry, self.policy(), ctx, tool) or diagnose_action(self.registry, ctx, tool, action)


def _preferred_first(
    names: list[str], defs: list[dict[str, Any]], prefer: Mapping[str, None]
) -> tuple[list[str], list[dict[str, Any]]]:
    """``names`` (and their definitions, when built) with the preferred ones first; otherwise in order."""
    order = sorted(range(len(names)), key=lambda i: (names[i] not in prefer, i))
    return [names[i] for i in order], [defs[i] for i in order] if defs else defs


#: How many left-out function names the model is shown per tool (the rest is a count).
NOTE_NAMES = 8


def cap_note(exposure: Exposure, registry: ToolRegistry, *, search: str = "") -> str:
    """The line the model reads about what the function cap left out of this request ("" when nothing):
    per tool, how many functions and a few names, and how to get them (``search``: the tool_search
    function, when it is offered)."""
    if not exposure.capped:
        return ""
    parts: list[str] = []
    for tool, functions in exposure.capped.items():
        server = registry.spec(tool).config.get("server") if registry.has_tool(tool) else None
        what = f"MCP server {server}" if isinstance(server, str) and server else f"the tool {tool}"
        names = ", ".join(functions[:NOTE_NAMES]) + (", ..." if len(functions) > NOTE_NAMES else "")
        whole = tool not in exposure.tools
        count = f"all {len(functions)}" if whole else str(len(functions))
        parts.append(f"{count} function{'s' if len(functions) != 1 else ''} of {what} ({names})")
    how = (
        f"call {search} with what you need and the matching ones are offered in your next step"
        if search
        else "they cannot be called in this request"
    )
    return (
        f"Tools left out of this request (the limit is {exposure.max_functions} functions): "
        + "; ".join(parts)
        + f". They exist and work; to use one, {how}."
    )


SEARCH_TOOL = "tool_search"


def cap_note_of(exposure: Exposure, registry: ToolRegistry) -> str:
    """:func:`cap_note` naming the offered tool_search function (if any) as the way to the rest."""
    search = next((f for f in exposure.functions if getattr(registry.resolve(f), "tool", "") == SEARCH_TOOL), "")
    return cap_note(exposure, registry, search=search)
