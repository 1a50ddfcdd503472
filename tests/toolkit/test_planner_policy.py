"""Planner buckets and policy precedence."""

from __future__ import annotations

import pytest
from helpers import base_manifest, manifest, tool_entry

from weclaw_desktop.toolkit import AvailabilityContext, ContractError, Policy, ToolRegistry, plan
from weclaw_desktop.toolkit.manifest import Manifest


def test_buckets_visible_and_hidden_with_reasons() -> None:
    data = base_manifest()
    data["tools"]["off"] = tool_entry("EchoTool", ["say", "shout"], enabled=False)
    data["tools"]["keyed"] = tool_entry("EchoTool", ["say", "shout"], requires={"secret": "k"})
    data["intents"]["talk"]["tools"] += ["keyed"]
    registry = ToolRegistry(Manifest.model_validate(data))
    result = plan(registry, Policy(), AvailabilityContext())
    assert result.visible == ["echo", "faulty"]
    assert {t: [d.code.value for d in ds] for t, ds in result.hidden.items()} == {
        "bridged": ["bridge-missing"],
        "off": ["disabled-in-manifest"],
        "keyed": ["auth-missing"],
    }
    registry.inject({"clipboard": object()})
    ctx = AvailabilityContext(has_secret=lambda n: n == "k")
    assert plan(registry, Policy(), ctx).visible == ["echo", "faulty", "bridged", "keyed"]


def test_planning_imports_no_tool_module() -> None:
    import sys

    sys.modules.pop("sample_tools", None)
    plan(ToolRegistry(manifest()), Policy())
    assert "sample_tools" not in sys.modules


def test_hidden_single_action() -> None:
    data = base_manifest()
    data["tools"]["echo"]["action_requires"] = {"shout": {"module": "no_such_mod_q", "package": "q"}}
    registry = ToolRegistry(Manifest.model_validate(data))
    result = plan(registry, Policy())
    assert "echo" in result.visible
    assert [d.code.value for d in result.hidden_functions["echo_shout"]] == ["dependency-missing"]


def test_visible_tool_without_executor_is_a_contract_error() -> None:
    data = base_manifest()
    data["tools"]["ghost"] = tool_entry("EchoTool", ["say"], module="no_such_module_for_planner")
    with pytest.raises(ContractError, match="'ghost' is visible but has no executor"):
        plan(ToolRegistry(Manifest.model_validate(data)), Policy())


PROFILES = {"full": ["*"], "small": ["echo"]}


@pytest.mark.parametrize(
    ("policy", "tool", "code"),
    [
        (Policy(), "echo", None),
        (Policy(profile="small"), "faulty", "disabled-by-policy"),
        (Policy(profile="small", allow=["faulty"]), "faulty", None),
        (Policy(profile="small", allow=["faulty"], deny=["faulty"]), "faulty", "disabled-by-policy"),
        (Policy(deny=["ec*"]), "echo", "disabled-by-policy"),
        (Policy(disabled=["echo"], allow=["echo"]), "echo", "disabled-by-user"),
        (Policy(profile="nope"), "echo", "disabled-by-policy"),
    ],
)
def test_policy_precedence(policy: Policy, tool: str, code: str | None) -> None:
    diag = policy.check(tool, PROFILES)
    assert (diag.code.value if diag else None) == code


def test_user_switch_round_trip() -> None:
    p = Policy().with_switch("echo", False)
    assert p.disabled == ["echo"]
    assert p.with_switch("echo", True).disabled == []
