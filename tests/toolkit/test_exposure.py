"""The one exposure computation (visible -> routed -> capped) and the round boundary the dispatcher draws
from it. What must hold: nothing invisible is ever offered, the cap is enforced here once, every tool that
is not offered says why, and the dispatcher refuses exactly what the round did not offer."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

import pytest
from helpers import base_manifest, manifest, tool_entry
from toolrun import tool_context

from weclaw_desktop.toolkit import (
    NO_ROUND,
    AvailabilityContext,
    Code,
    DecidedBy,
    Diagnostic,
    Dispatcher,
    ErrorKind,
    ExposurePlanner,
    Policy,
    Routing,
    ToolCall,
    ToolRegistry,
    ToolStatus,
)
from weclaw_desktop.toolkit.manifest import Manifest

CIRCUIT = Diagnostic(code=Code.CIRCUIT_OPEN, message="faulty failed 3 times in a row", hint="Use another approach.")


class Wants:
    """A router that wants fixed tools (in this order), whatever is visible."""

    def __init__(self, *tools: str, needed_by: dict[str, str] | None = None) -> None:
        self.tools = list(tools)
        self.needed_by = needed_by or {}

    def for_round(self, visible: Sequence[str]) -> Routing:
        return Routing(
            tools=list(self.tools),
            tier="test",
            reasons={t: f"wanted {t}" for t in self.tools},
            needed_by=dict(self.needed_by),
        )


def planner(data: dict | None = None, policy: Policy | None = None) -> ExposurePlanner:
    registry = ToolRegistry(Manifest.model_validate(data or base_manifest()))
    return ExposurePlanner(registry, policy=lambda: policy or Policy())


def test_without_a_router_every_visible_tool_is_offered_and_the_rest_say_why() -> None:
    r = planner().compute()
    assert r.visible == ("echo", "faulty") and r.tools == ("echo", "faulty")
    assert r.functions == ("echo_say", "echo_shout", "faulty_crash", "faulty_refuse", "faulty_sleep", "faulty_nested")
    assert [d.code for d in r.hidden["bridged"]] == [Code.BRIDGE_MISSING]
    assert r.offers("echo_say") and not r.offers("bridged_paste") and r.why_hidden("bridged")
    assert r.schemas == ()  # no module imported for a listing


def test_listing_imports_no_tool_module_but_a_round_builds_schemas() -> None:
    sys.modules.pop("sample_tools", None)
    p = planner()
    p.compute(Wants("echo"))
    assert "sample_tools" not in sys.modules
    r = p.compute(Wants("echo"), schemas=True)
    assert [s["function"]["name"] for s in r.schemas] == list(r.functions) == ["echo_say", "echo_shout"]


def test_blocked_tools_are_hidden_for_the_turn_with_their_diagnostic() -> None:
    r = planner().compute(Wants("echo", "faulty"), blocked={"faulty": CIRCUIT})
    assert r.tools == ("echo",) and "faulty" not in r.visible
    assert r.hidden["faulty"] == (CIRCUIT,)
    assert r.dropped["faulty"] == "wanted faulty, but not available now"


def test_a_router_cannot_offer_an_invisible_or_unknown_tool() -> None:
    r = planner(policy=Policy(deny=["faulty"])).compute(Wants("faulty", "bridged", "nope", "echo"))
    assert r.tools == ("echo",)
    assert set(r.dropped) == {"faulty", "bridged", "nope"}
    assert all(reason.endswith("but not available now") for reason in r.dropped.values())


def test_the_function_cap_takes_whole_tools_in_priority_order() -> None:
    data = base_manifest()
    data["exposure"] = {"max_functions": 5}
    r = planner(data).compute(Wants("faulty", "echo"))  # faulty has 4 functions, echo 2: echo does not fit
    assert r.tools == ("faulty",) and len(r.functions) == 4
    assert r.dropped == {"echo": "wanted echo, but over the 5-function limit"}
    r = planner(data).compute(Wants("echo", "faulty"))
    assert r.tools == ("echo",) and r.dropped["faulty"].endswith("over the 5-function limit")


def test_a_dependency_whose_tool_was_left_out_is_left_out_too() -> None:
    data = base_manifest()
    data["exposure"] = {"max_functions": 3}
    r = planner(data).compute(Wants("faulty", "echo", needed_by={"echo": "faulty"}))
    assert r.tools == ()
    assert r.dropped["echo"] == "wanted echo, but faulty is not offered"


def test_single_hidden_functions_are_not_offered() -> None:
    data = base_manifest()
    data["tools"]["echo"]["action_requires"] = {"shout": {"module": "no_such_mod_q", "package": "q"}}
    r = planner(data).compute(Wants("echo"))
    assert r.functions == ("echo_say",) and not r.offers("echo_shout")
    assert [d.code for d in r.why_hidden("echo", "echo_shout")] == [Code.DEPENDENCY_MISSING]


def test_a_tool_that_cannot_load_is_hidden_not_offered() -> None:
    data = base_manifest()
    data["tools"]["broken"] = tool_entry("NoSuchClass", ["say"])
    r = planner(data).compute(Wants("broken", "echo"), schemas=True)
    assert r.tools == ("echo",) and "broken" not in r.visible
    assert [d.code for d in r.hidden["broken"]] == [Code.LOAD_FAILED]


def test_policy_and_availability_are_read_at_every_computation() -> None:
    policy = Policy()
    registry = ToolRegistry(manifest())
    p = ExposurePlanner(registry, policy=lambda: policy, availability=AvailabilityContext)
    assert "echo" in p.compute().tools
    policy = policy.with_switch("echo", False)
    r = p.compute()
    assert "echo" not in r.tools and [d.code for d in r.hidden["echo"]] == [Code.DISABLED_BY_USER]
    registry.inject({"clipboard": object()})
    assert "bridged" in p.compute().tools


# --- the boundary in the dispatcher -----------------------------------------------------------------


async def dispatch(d: Dispatcher, name: str, args: dict, offered):  # type: ignore[no-untyped-def]
    call = ToolCall(id="c1", name=name, arguments=json.dumps(args))
    return await d.dispatch(call, tool_context(session_id="s"), gate=None, offered=offered)


async def test_the_dispatcher_refuses_what_the_round_did_not_offer() -> None:
    d = Dispatcher(ToolRegistry(manifest()))
    offered = d.exposure.compute(Wants("faulty"))
    out = await dispatch(d, "echo_say", {"text": "hi"}, offered)
    assert (out.status, out.error, out.decided_by, out.ran) == (
        ToolStatus.DENIED,
        ErrorKind.NOT_OFFERED,
        DecidedBy.EXPOSURE,
        False,
    )
    assert out.result.output.startswith("echo_say exists but was not offered in this step, so it was not run.")
    assert "Use the functions you were given" in out.result.output  # no finder tool in this manifest
    ok = await dispatch(d, "faulty_refuse", {"text": "x"}, offered)
    assert ok.error is ErrorKind.TOOL_ERROR and ok.ran  # offered: it ran (and failed as designed)


async def test_a_hidden_tool_is_refused_with_the_round_reason() -> None:
    d = Dispatcher(ToolRegistry(manifest()))
    offered = d.exposure.compute(Wants("echo", "faulty"), blocked={"faulty": CIRCUIT})
    out = await dispatch(d, "faulty_refuse", {"text": "x"}, offered)
    assert (out.error, out.decided_by, out.status) == (ErrorKind.CIRCUIT_OPEN, DecidedBy.CIRCUIT, ToolStatus.ERROR)
    assert "faulty failed 3 times in a row" in out.result.output and not out.ran


async def test_the_finder_is_named_when_it_is_offered() -> None:
    data = base_manifest()
    data["tools"]["finder"] = tool_entry("EchoTool", ["say", "shout"], always_on=True)
    d = Dispatcher(ToolRegistry(Manifest.model_validate(data)))
    out = await dispatch(d, "echo_say", {"text": "x"}, d.exposure.compute(Wants("finder")))
    assert "Call finder_say with a few words about the need" in out.result.output


async def test_no_round_still_checks_availability_and_policy() -> None:
    d = Dispatcher(ToolRegistry(manifest()), policy=Policy(disabled=["echo"]))
    out = await dispatch(d, "echo_say", {"text": "x"}, NO_ROUND)
    assert (out.error, out.decided_by) == (ErrorKind.DISABLED, DecidedBy.POLICY)
    out = await dispatch(d, "bridged_paste", {"seconds": 0}, NO_ROUND)
    assert out.error is ErrorKind.UNAVAILABLE and not out.ran


def test_the_outcome_type_keeps_error_and_status_consistent() -> None:
    from weclaw_desktop.toolkit import CallOutcome, ToolResult

    with pytest.raises(ValueError):
        CallOutcome(call_id="c", function="f", result=ToolResult.ok("fine"), error=ErrorKind.TIMEOUT)
    with pytest.raises(ValueError):
        CallOutcome(call_id="c", function="f", result=ToolResult.fail("bad"))
