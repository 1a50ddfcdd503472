"""Our SDK server (tests/mcp/sdk_server.py) end to end through the manager and the dispatcher: schemas that
refer to themselves and free-form arguments, risk from annotations (a destructive tool asks even on a
trusted server), per-tool approval modes, clean results, non-ASCII names, task-only tools, resources."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
from toolrun import Direct, tool_context

from weclaw_desktop.mcp import McpManager, McpTool, ServerState
from weclaw_desktop.settings import McpServerSettings
from weclaw_desktop.toolkit import (
    ApprovalDecision,
    ApprovalRequest,
    ApprovalResult,
    AutoApprove,
    Origin,
    Risk,
    ToolCall,
    ToolRegistry,
    ToolStatus,
)

Calls = Callable[[], list[tuple[str, dict[str, Any]]]]


async def connected(manager: McpManager, settings: McpServerSettings) -> McpTool:
    tool = manager.start(settings)
    assert tool is not None
    assert await tool.connection.wait_for(ServerState.CONNECTED, ServerState.DOWN, within=20)
    assert tool.connection.state is ServerState.CONNECTED, tool.connection.error
    return tool


def call(function: str, /, **arguments: object) -> ToolCall:
    return ToolCall(id="c1", name=function, arguments=json.dumps(arguments, ensure_ascii=False))


class RecordingGate:
    def __init__(self, decision: ApprovalDecision) -> None:
        self.decision = decision
        self.requests: list[ApprovalRequest] = []

    async def request(self, req: ApprovalRequest) -> ApprovalResult:
        self.requests.append(req)
        return ApprovalResult(self.decision, decided_by="user")


def params_of(registry: ToolRegistry, function: str) -> dict[str, Any]:
    tool = registry.resolve(function)
    assert tool is not None, function
    defs = {d["function"]["name"]: d["function"] for d in registry.function_defs([tool.tool])}
    return dict(defs[function]["parameters"])


async def test_a_self_referencing_schema_is_valid_small_and_still_enforced(
    manager: McpManager, registry: ToolRegistry, sdk_settings: Callable[..., McpServerSettings], sdk_calls: Calls
) -> None:
    await connected(manager, sdk_settings())
    schema = params_of(registry, "mcp_sdk_write_tree")
    jsonschema.Draft202012Validator.check_schema(schema)
    assert len(json.dumps(schema)) < 2048
    dispatcher = Direct(registry, gate=AutoApprove())
    tree = {"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}]}
    result = await dispatcher.dispatch(call("mcp_sdk_write_tree", root=tree), tool_context())
    assert result.output == "created 3 nodes", result.output
    # the server's own (recursive) schema still checks every level the model's view does not spell out
    bad = {"name": "a", "children": [{"name": "b", "children": [{"name": ""}]}]}
    result = await dispatcher.dispatch(call("mcp_sdk_write_tree", root=bad), tool_context())
    assert result.status is ToolStatus.ERROR and "root.children.0.children.0.name" in result.output
    assert sdk_calls() == [("write_tree", {"root": tree})]


async def test_free_form_arguments_reach_the_server(
    manager: McpManager, registry: ToolRegistry, sdk_settings: Callable[..., McpServerSettings], sdk_calls: Calls
) -> None:
    """main turned `additionalProperties: true` into "no arguments" and nested objects into "must be empty"."""
    await connected(manager, sdk_settings())
    assert params_of(registry, "mcp_sdk_configure")["additionalProperties"] is True
    assert params_of(registry, "mcp_sdk_tag")["properties"]["options"] == {"type": "object"}
    dispatcher = Direct(registry, gate=AutoApprove())
    free = {"depth": 3, "nested": {"a": [1, 2]}, "名字": "值"}
    result = await dispatcher.dispatch(call("mcp_sdk_configure", **free), tool_context())
    assert result.succeeded, result.output
    options = {"color": "red", "deep": {"x": {"y": True}}}
    result = await dispatcher.dispatch(call("mcp_sdk_tag", item="cup", options=options), tool_context())
    assert result.succeeded, result.output
    result = await dispatcher.dispatch(call("mcp_sdk_tag", item="cup", colour="red"), tool_context())
    assert result.status is ToolStatus.ERROR and "unknown argument 'colour'" in result.output  # a closed root
    assert sdk_calls() == [("configure", free), ("tag", {"item": "cup", "options": options})]


async def test_a_destructive_tool_on_a_trusted_server_asks(
    manager: McpManager, registry: ToolRegistry, sdk_settings: Callable[..., McpServerSettings], sdk_calls: Calls
) -> None:
    await connected(manager, sdk_settings(trusted=True))
    assert registry.risk_of("mcp_sdk", "reset_repo") is Risk.HIGH  # destructiveHint
    assert registry.risk_of("mcp_sdk", "lookup") is Risk.LOW  # readOnlyHint
    assert registry.risk_of("mcp_sdk", "tag") is Risk.MEDIUM  # no hint
    assert registry.spec("mcp_sdk").config["effects"] == {"fetch_page": ["sends-data-out"]}  # openWorldHint
    gate = RecordingGate(ApprovalDecision.DENY)
    dispatcher = Direct(registry, gate=gate)
    result = await dispatcher.dispatch(call("mcp_sdk_reset_repo", commit="HEAD~3"), tool_context(origin=Origin.GUI))
    assert result.status is ToolStatus.DENIED
    assert [(r.function, r.risk) for r in gate.requests] == [("mcp_sdk_reset_repo", Risk.HIGH)]
    assert sdk_calls() == []  # denied: the server never heard of it
    result = await dispatcher.dispatch(call("mcp_sdk_lookup", word="cat"), tool_context(origin=Origin.GUI))
    assert result.succeeded and len(gate.requests) == 1  # read-only on a trusted server: no question
    gate.decision = ApprovalDecision.ALLOW_ONCE
    result = await dispatcher.dispatch(call("mcp_sdk_reset_repo", commit="HEAD~3"), tool_context(origin=Origin.GUI))
    assert result.output == "reset to HEAD~3" and len(gate.requests) == 2
    assert [c[0] for c in sdk_calls()] == ["lookup", "reset_repo"]


async def test_untrusted_servers_ask_for_everything_even_read_only(
    manager: McpManager, registry: ToolRegistry, sdk_settings: Callable[..., McpServerSettings]
) -> None:
    await connected(manager, sdk_settings())
    assert {registry.risk_of("mcp_sdk", a) for a in ("lookup", "tag", "reset_repo", "read_resource")} == {Risk.HIGH}


async def test_per_tool_approval_modes_and_switches(
    manager: McpManager, registry: ToolRegistry, sdk_settings: Callable[..., McpServerSettings], sdk_calls: Calls
) -> None:
    modes: dict[str, Any] = {"reset_repo": "allow", "lookup": "ask", "fetch_page": "deny"}
    tool = await connected(manager, sdk_settings(trusted=True, tool_approval=modes))
    assert "mcp_sdk_fetch_page" not in registry.functions_of("mcp_sdk")  # denied = not offered at all
    assert tool.switched_off == ["fetch_page"]
    assert registry.risk_of("mcp_sdk", "reset_repo") is Risk.LOW and registry.risk_of("mcp_sdk", "lookup") is Risk.HIGH
    gate = RecordingGate(ApprovalDecision.DENY)
    dispatcher = Direct(registry, gate=gate)
    assert (
        await dispatcher.dispatch(call("mcp_sdk_reset_repo", commit="a1"), tool_context(origin=Origin.GUI))
    ).succeeded
    result = await dispatcher.dispatch(call("mcp_sdk_lookup", word="x"), tool_context(origin=Origin.GUI))
    assert result.status is ToolStatus.DENIED and [r.function for r in gate.requests] == ["mcp_sdk_lookup"]
    result = await dispatcher.dispatch(call("mcp_sdk_fetch_page", url="https://example.com"), tool_context())
    assert result.status is ToolStatus.ERROR and "no function named" in result.output
    assert [c[0] for c in sdk_calls()] == ["reset_repo"]


async def test_results_carry_no_base64_and_list_the_saved_image(
    manager: McpManager, registry: ToolRegistry, sdk_settings: Callable[..., McpServerSettings], weclaw_home: Any
) -> None:
    """main sent the picture's base64 twice more inside the structured data (16,000 characters of noise)."""
    await connected(manager, sdk_settings(trusted=True))
    result = await Direct(registry, gate=AutoApprove()).dispatch(call("mcp_sdk_snapshot"), tool_context())
    assert result.succeeded, result.output
    text = result.for_model()
    assert len(text) < 600, text
    assert "iVBOR" not in text and "AAAA" not in text
    assert len(result.files) == 1 and result.images == result.files  # saved once, listed for image parts
    assert result.data["width"] == 1 and result.files[0] in result.data["image"]["data"]
    saved = await asyncio.to_thread(Path(result.files[0]).read_bytes)
    assert saved.startswith(b"\x89PNG\r\n\x1a\n")


async def test_chinese_tool_names_both_work_and_a_task_only_tool_is_left_out_with_a_reason(
    manager: McpManager, registry: ToolRegistry, sdk_settings: Callable[..., McpServerSettings]
) -> None:
    tool = await connected(manager, sdk_settings(trusted=True))
    fns = registry.functions_of("mcp_sdk")
    chinese = [f for f in fns if f.startswith("mcp_sdk_TongJi_")]
    assert len(chinese) == 2
    dispatcher = Direct(registry, gate=AutoApprove())
    outputs = {(await dispatcher.dispatch(call(f), tool_context())).output for f in chinese}
    assert outputs == {"统计: 3", "統計: 3"}  # each reaches its own tool
    assert "mcp_sdk_long_job" not in fns
    assert any("'long_job'" in p and "MCP task" in p for p in tool.problems)


async def test_the_model_reads_resources_through_an_action(
    manager: McpManager, registry: ToolRegistry, sdk_settings: Callable[..., McpServerSettings], sdk_calls: Calls
) -> None:
    await connected(manager, sdk_settings(trusted=True))
    defs = {d["function"]["name"]: d["function"] for d in registry.function_defs(["mcp_sdk"])}
    about = defs["mcp_sdk_read_resource"]["description"]
    assert "note://readme (How to use this server)" in about and "note://items/{id}" in about
    dispatcher = Direct(registry, gate=AutoApprove())
    result = await dispatcher.dispatch(call("mcp_sdk_read_resource", uri="note://readme"), tool_context())
    assert result.output == "Call lookup to look words up."
    result = await dispatcher.dispatch(call("mcp_sdk_read_resource", uri="note://items/42"), tool_context())
    assert result.output == "item 42"
    result = await dispatcher.dispatch(call("mcp_sdk_read_resource", uri="note://logo"), tool_context())
    assert result.succeeded and result.images and result.images[0].endswith(".png")
    result = await dispatcher.dispatch(call("mcp_sdk_read_resource", uri="note://nothing"), tool_context())
    assert result.status is ToolStatus.ERROR and "could not read note://nothing" in result.output
    assert [c[1]["uri"] for c in sdk_calls()] == ["note://readme", "note://items/42", "note://logo", "note://nothing"]
    # the composer's view: what each connected server offers
    assert [(s, r.uri) for s, r in manager.resources()] == [("sdk", "note://readme"), ("sdk", "note://logo")]
    assert [(s, p.name) for s, p in manager.prompts()] == [("sdk", "review")]
