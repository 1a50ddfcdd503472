"""MCP tools over stdio, end to end through the dispatcher: listing, calls, validation, approvals."""

from __future__ import annotations

import json
from collections.abc import Callable

from polling import reached
from toolrun import Direct, tool_context

from weclaw_desktop.mcp import McpManager, ServerState
from weclaw_desktop.settings import McpServerSettings
from weclaw_desktop.toolkit import (
    ApprovalDecision,
    ApprovalRequest,
    ApprovalResult,
    AutoApprove,
    MemoryAudit,
    Origin,
    Policy,
    Risk,
    ToolCall,
    ToolRegistry,
    ToolStatus,
    plan,
)


async def connected(manager: McpManager, settings: McpServerSettings) -> None:
    tool = manager.start(settings)
    assert tool is not None
    assert await tool.connection.wait_for(ServerState.CONNECTED, ServerState.DOWN, within=20)
    assert tool.connection.state is ServerState.CONNECTED, tool.connection.error


def call(function: str, /, **arguments: object) -> ToolCall:
    return ToolCall(id="c1", name=function, arguments=json.dumps(arguments))


async def test_tools_are_listed_and_exposed_as_functions(
    manager: McpManager, registry: ToolRegistry, stdio_settings: Callable[..., McpServerSettings]
) -> None:
    await connected(manager, stdio_settings(keywords=["算术", "arithmetic"]))
    fns = registry.functions_of("mcp_test")
    assert fns[:7] == [
        "mcp_test_add",
        "mcp_test_env_digest",
        "mcp_test_fail_with_env",
        "mcp_test_crash",
        "mcp_test_hang",
        "mcp_test_place_order",
        "mcp_test_pixel",
    ]
    assert "mcp_test_weird_name_u" in fns
    assert "mcp_test_dup_name" in fns and "mcp_test_dup_name_6b08e9c1" in fns  # both kept, told apart
    assert "mcp_test_broken_schema" not in fns
    assert all(len(f) <= 64 for f in fns)
    assert plan(registry, Policy()).is_visible("mcp_test")

    defs = {d["function"]["name"]: d["function"] for d in registry.function_defs(["mcp_test"])}
    assert defs["mcp_test_add"]["parameters"] == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    assert defs["mcp_test_add"]["description"] == "Add two whole numbers. (MCP server 'test', read-only)"
    order = defs["mcp_test_place_order"]["parameters"]
    assert "$ref" not in json.dumps(order) and "$defs" not in order
    item = order["properties"]["order"]["properties"]["items"]["items"]
    assert "additionalProperties" not in item  # as the server wrote it (the server's schema is enforced on calls)
    assert item["properties"]["qty"] == {"type": "integer", "minimum": 1, "description": "How many"}

    spec = registry.spec("mcp_test")
    assert spec.config["keywords"] == ["算术", "arithmetic"]
    assert "Tools of the MCP server 'test' (weclaw-test)" in spec.description.en
    assert "place_order" in spec.description.en
    assert spec.risk is Risk.HIGH

    # The server adds a tool and says its list changed: the new function appears, the panel is told.
    changes: list[int] = []
    registry.add_listener(lambda: changes.append(1))
    assert "mcp_test_grown" not in fns
    dispatcher = Direct(registry, gate=AutoApprove())
    assert (await dispatcher.dispatch(call("mcp_test_grow"), tool_context())).output == "grew"
    await reached(lambda: "mcp_test_grown" in registry.functions_of("mcp_test"), within=5, interval=0.05)
    assert (await dispatcher.dispatch(call("mcp_test_grown"), tool_context())).output == "grown ok"
    assert changes


async def test_calls_with_valid_and_invalid_arguments(
    manager: McpManager,
    registry: ToolRegistry,
    stdio_settings: Callable[..., McpServerSettings],
    server_calls: Callable[[], list[str]],
) -> None:
    await connected(manager, stdio_settings())
    dispatcher = Direct(registry, gate=AutoApprove())
    # Invalid: refused with every problem named, and the server is never called.
    result = await dispatcher.dispatch(call("mcp_test_add", a="two", c=1), tool_context())
    assert result.status is ToolStatus.ERROR
    assert result.output == (
        "Invalid arguments for mcp_test_add:\n"
        "- unknown argument 'c' (valid: a, b)\n"
        "- b: Field required\n"
        "- a: 'two' is not of type 'integer'\n"
        "Fix the arguments and call again."
    )
    bad_order = {"customer": "Li", "items": [{"sku": "A1", "qty": 0}]}
    result = await dispatcher.dispatch(call("mcp_test_place_order", order=bad_order), tool_context())
    assert result.status is ToolStatus.ERROR
    assert "- order.items.0.qty: 0 is less than the minimum of 1" in result.output
    assert server_calls() == []

    # Valid: text and structured content come back as output and data.
    result = await dispatcher.dispatch(call("mcp_test_add", a=2, b=3), tool_context())
    assert result.status is ToolStatus.SUCCESS, result.output
    assert result.data == {"result": 5}
    assert result.for_model() == 'data: {"result": 5}'
    order = {"customer": "Li", "items": [{"sku": "A1", "qty": 2}, {"sku": "B2", "qty": 3}]}
    result = await dispatcher.dispatch(call("mcp_test_place_order", order=order), tool_context())
    assert result.status is ToolStatus.SUCCESS, result.output
    assert result.data == {"customer": "Li", "units": 5, "note": ""}
    result = await dispatcher.dispatch(call("mcp_test_weird_name_u"), tool_context())
    assert result.output == "weird ok"  # the server got its own name back, not the sanitised one
    assert server_calls() == ["add", "place_order", "weird"]


class RecordingGate:
    def __init__(self, decision: ApprovalDecision) -> None:
        self.decision = decision
        self.requests: list[ApprovalRequest] = []

    async def request(self, req: ApprovalRequest) -> ApprovalResult:
        self.requests.append(req)
        return ApprovalResult(self.decision, decided_by="user")


async def test_untrusted_server_asks_and_a_denial_means_no_call(
    manager: McpManager,
    registry: ToolRegistry,
    http_settings: Callable[..., McpServerSettings],
    http_calls: Callable[[], list[str]],
) -> None:
    await connected(manager, http_settings())
    gate = RecordingGate(ApprovalDecision.DENY)
    audit = MemoryAudit()
    dispatcher = Direct(registry, gate=gate, audit=audit)
    result = await dispatcher.dispatch(call("mcp_web_add", a=1, b=1), tool_context(origin=Origin.GUI))
    assert result.status is ToolStatus.DENIED
    assert [(r.function, r.risk) for r in gate.requests] == [("mcp_web_add", Risk.HIGH)]
    assert http_calls() == []
    assert [(r.function, r.status, r.approval) for r in audit.records] == [("mcp_web_add", "denied", "deny")]

    gate.decision = ApprovalDecision.ALLOW_ONCE
    result = await dispatcher.dispatch(call("mcp_web_add", a=1, b=1), tool_context(origin=Origin.GUI))
    assert result.status is ToolStatus.SUCCESS
    assert len(gate.requests) == 2 and http_calls() == ["add"]


async def test_trusted_server_runs_without_a_prompt(
    manager: McpManager,
    registry: ToolRegistry,
    http_settings: Callable[..., McpServerSettings],
    http_calls: Callable[[], list[str]],
) -> None:
    await connected(manager, http_settings(trusted=True))
    gate = RecordingGate(ApprovalDecision.DENY)
    dispatcher = Direct(registry, gate=gate)
    result = await dispatcher.dispatch(call("mcp_web_env_digest", name="PATH"), tool_context(origin=Origin.GUI))
    assert result.status is ToolStatus.SUCCESS, result.output
    assert gate.requests == []
    assert registry.risk_of("mcp_web", "add") is Risk.LOW  # read-only annotation
    assert registry.risk_of("mcp_web", "env_digest") is Risk.MEDIUM
    # From the phone, medium risk still asks.
    result = await dispatcher.dispatch(call("mcp_web_env_digest", name="PATH"), tool_context(origin=Origin.COMPANION))
    assert result.status is ToolStatus.DENIED and len(gate.requests) == 1
    assert http_calls() == ["env_digest"]
