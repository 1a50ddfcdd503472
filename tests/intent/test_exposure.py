"""Progressive exposure across the rounds of a turn: tool_search, widening, stickiness, depends_on, caps.

The routing (which tools, in which order, why) is the exposer's; the 128-function cap is the one exposure
computation's (``toolkit/exposure.py``), so the cap tests run the exposers through it."""

from __future__ import annotations

from typing import Any

from routing_helpers import make, small_manifest, tool

from weclaw_desktop.intent.api import TurnRequest
from weclaw_desktop.intent.exposure import AllExposer, ProgressiveExposer
from weclaw_desktop.intent.factory import make_exposer
from weclaw_desktop.toolkit.base import ToolResult, ToolStatus
from weclaw_desktop.toolkit.exposure import Exposure, ExposurePlanner
from weclaw_desktop.toolkit.manifest import Manifest
from weclaw_desktop.toolkit.policy import Policy
from weclaw_desktop.toolkit.registry import ToolRegistry

EVERY = ["tool_search", "files", "shell", "phone", "mail", "zipper"]


def exposer(data: dict[str, Any] | None = None) -> ProgressiveExposer:
    return ProgressiveExposer(ToolRegistry(make(data or small_manifest())))


def offered(registry: ToolRegistry, turn: Any) -> Exposure:
    """The round the loop would send: the turn's routing through the one exposure computation."""
    return ExposurePlanner(registry, policy=Policy).compute(turn)


def test_first_round_exposes_always_on_and_routed_tools_with_reasons() -> None:
    turn = exposer().start_turn("zip the reports")
    r = turn.for_round(EVERY)
    assert r.tools == ["tool_search", "zipper"]
    assert r.tier == "recommended"
    assert r.intents == ["archive"]
    assert r.reasons == {"tool_search": "always on", "zipper": "intent archive (0.85, recommended)"}
    sent = offered(turn.registry, turn)
    assert sent.functions == ("tool_search_find", "zipper_zip", "zipper_unzip")
    assert sent.tools == ("tool_search", "zipper") and sent.reasons == r.reasons


def test_small_talk_exposes_only_the_always_on_tool() -> None:
    r = exposer().start_turn("你好呀").for_round(EVERY)
    assert r.tools == ["tool_search"]
    assert r.tier == "clarify"


def test_tool_search_findings_are_exposed_from_the_next_round() -> None:
    turn = exposer().start_turn("你好呀")
    assert turn.for_round(EVERY).tools == ["tool_search"]
    found = ToolResult.ok("found", data={"tools": ["mail", "no_such_tool"]})
    turn.note_result("tool_search", "find", found)
    r = turn.for_round(EVERY)
    assert r.tools == ["tool_search", "mail"]  # unknown names are ignored
    assert r.reasons["mail"] == "found by tool_search"


def test_failure_widens_to_the_intents_alternatives_in_the_next_round() -> None:
    turn = exposer().start_turn("rename the report")
    assert turn.for_round(EVERY).tools == ["tool_search", "files"]
    turn.note_result("files", "write", ToolResult.fail("disk full"))
    r = turn.for_round(EVERY)
    # files belongs to the files intent (alternative: shell) and the archive intent (recommended: zipper)
    assert r.tools == ["tool_search", "files", "shell", "zipper"]
    assert r.reasons["shell"] == "alternative in files after files error"
    assert r.tier == "expanded"


def test_denial_and_timeout_widen_too_but_success_and_cancel_do_not() -> None:
    for status, widened in [
        (ToolStatus.DENIED, True),
        (ToolStatus.TIMEOUT, True),
        (ToolStatus.SUCCESS, False),
        (ToolStatus.CANCELLED, False),
    ]:
        turn = exposer().start_turn("email the team")
        turn.note_result("mail", "send", ToolResult(status=status, output="x"))
        tools = turn.for_round(EVERY).tools
        # mail is in the phone intent (recommended phone, alternative mail): widening adds phone (+ its files)
        assert ("phone" in tools) is widened, status


def test_tools_of_the_last_turns_stay_exposed_for_follow_ups() -> None:
    ex = exposer()
    for text in ("再发一次", "send it again"):
        r = ex.start_turn(TurnRequest.of(text, [["phone"], ["mail"], ["zipper"]])).for_round(EVERY)
        # sticky_turns = 2: the two newest turns; phone brings its depends_on (files)
        assert r.tools == ["tool_search", "phone", "files", "mail"]
        assert r.reasons["phone"] == "used in a recent turn"
        assert r.needed_by == {"files": "phone"}
        assert "zipper" not in r.tools


def test_depends_on_comes_along_transitively() -> None:
    data = small_manifest()
    data["tools"]["files"]["depends_on"] = ["shell"]
    r = exposer(data).start_turn("send it to my phone").for_round(EVERY)
    assert r.tools == ["tool_search", "phone", "files", "shell"]
    assert r.reasons["files"] == "needed by phone"
    assert r.reasons["shell"] == "needed by phone"


def test_only_visible_tools_are_exposed_and_the_rest_say_why() -> None:
    r = exposer().start_turn("zip it and send it to my phone").for_round(["tool_search", "zipper"])
    assert r.tools == ["tool_search", "zipper"]
    assert r.dropped["phone"].endswith("but not available now")


def test_alternatives_stand_in_for_recommended_tools_that_are_hidden_now() -> None:
    r = exposer().start_turn("send it to my phone").for_round(["tool_search", "mail", "files"])
    assert r.tools == ["tool_search", "mail"]  # phone is hidden (not connected): mail, its alternative
    assert r.reasons["mail"] == "alternative in phone: recommended not available now"
    assert r.dropped["phone"].endswith("but not available now")


def synthetic(n: int, actions: int = 5) -> Manifest:
    data = small_manifest()
    data["tools"] = {"tool_search": tool(["find"], always_on=True)}
    names = [f"t{i:03d}" for i in range(n)]
    for name in names:
        data["tools"][name] = tool([f"a{j}" for j in range(actions)])
    data["intents"] = {
        "everything": {"action_phrases": {"en": ["everything"], "zh": ["全部"]}, "tools": names, "recommended": names},
    }
    data["exposure"]["max_tools_per_request"] = 128
    return make(data)


def test_never_more_than_128_functions_with_200_synthetic_tools() -> None:
    registry = ToolRegistry(synthetic(200))
    found = ToolResult.ok("", data={"tools": registry.tool_names()[1:]})
    for ex in (ProgressiveExposer(registry), AllExposer(registry)):
        turn = ex.start_turn("everything")
        turn.note_result("tool_search", "find", found)
        r = ExposurePlanner(registry, policy=Policy).compute(turn)
        assert len(r.functions) == 126  # 1 + 25 tools x 5; one more tool would make 131
        assert sum(len(registry.functions_of(t)) for t in r.tools) == len(r.functions)
        assert r.tools[0] == "tool_search"
        assert len(r.tools) == 26
        assert r.dropped["t199"].endswith("over the 128-function limit")


def test_a_dependency_is_left_out_with_the_tool_that_needs_it() -> None:
    """phone depends on files: when phone does not fit in the cap, files does not come along for it."""
    data = small_manifest()
    data["exposure"]["max_functions"] = 2  # tool_search_find + phone_send fit; files would make 4
    registry = ToolRegistry(make(data))
    r = ExposurePlanner(registry, policy=Policy).compute(ProgressiveExposer(registry).start_turn("send it to my phone"))
    assert r.tools == ("tool_search", "phone")
    assert r.dropped["files"] == "needed by phone, but over the 2-function limit"
    data["exposure"]["max_functions"] = 1
    registry = ToolRegistry(make(data))
    r = ExposurePlanner(registry, policy=Policy).compute(ProgressiveExposer(registry).start_turn("send it to my phone"))
    assert r.tools == ("tool_search",)
    assert r.dropped["phone"].endswith("over the 1-function limit")
    assert r.dropped["files"] == "needed by phone, but phone is not offered"


def test_the_per_request_tool_limit_holds_for_routing_widening_and_stickiness() -> None:
    data = small_manifest(max_tools_per_request=2)
    r = exposer(data).start_turn(TurnRequest.of("zip it", [["mail", "phone", "shell"]])).for_round(EVERY)
    assert r.tools == ["tool_search", "zipper", "mail"]
    assert r.dropped["phone"] == "used in a recent turn, but over the 2-tool limit"


def test_mode_all_exposes_every_visible_tool() -> None:
    registry = ToolRegistry(make(small_manifest()))
    ex = make_exposer(registry, "all")
    assert isinstance(ex, AllExposer)
    r = ex.start_turn("你好").for_round(EVERY)
    assert r.tools == EVERY
    assert r.tier == "all"
    progressive = make_exposer(registry)
    assert isinstance(progressive, ProgressiveExposer)
    assert make_exposer(registry, "progressive").engine is progressive.engine  # built once per registry
