"""Function names (sanitising, the 64-character limit, collisions) and parameter schemas, without a server."""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
import pytest
from toolrun import Direct, tool_context

from weclaw_desktop.mcp import McpConnection, McpTool, action_name, tool_name
from weclaw_desktop.mcp.names import assign_names
from weclaw_desktop.mcp.schema import SchemaProblem, params_model, sanitize
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import McpServerSettings
from weclaw_desktop.toolkit import ToolCall, ToolRegistry, ToolStatus


def test_action_names_are_sanitised() -> None:
    assert tool_name("github") == "mcp_github"
    assert action_name("github", "list_issues") == "list_issues"
    assert action_name("github", "repo.search/code") == "repo_search_code"
    assert action_name("fs", "读取文件") == "tool"
    assert action_name("fs", "read-file v2") == "read-file_v2"


def test_long_names_are_cut_to_64_characters_and_stay_distinct() -> None:
    server = "s" * 32  # the longest server name settings allow
    a = action_name(server, "describe_" + "x" * 80 + "_one")
    b = action_name(server, "describe_" + "x" * 80 + "_two")
    assert a != b
    assert len(f"mcp_{server}_{a}") == 64 and len(f"mcp_{server}_{b}") == 64
    assert a.startswith("describe_xxx")


def test_collisions_inside_a_server_refuse_the_second_with_a_clear_message() -> None:
    named, problems = assign_names("gh", ["get.issue", "get_issue", "get-issue"])
    assert [(n.original, n.function) for n in named] == [
        ("get.issue", "mcp_gh_get_issue"),
        ("get-issue", "mcp_gh_get-issue"),
    ]
    assert problems == [
        "tool 'get_issue' of MCP server 'gh' is skipped: its name becomes 'mcp_gh_get_issue', "
        "the same as tool 'get.issue'. Ask the server's author to rename one."
    ]


def _tool(name: str, schema: dict[str, Any] | None = None) -> types.Tool:
    return types.Tool(name=name, description=f"{name} tool", input_schema=schema or {"type": "object"})


def _offline_tool(server: str, names: list[str]) -> McpTool:
    conn = McpConnection(McpServerSettings(name=server, command="unused"), SecretStore())
    conn.tools = [_tool(n) for n in names]
    return McpTool(conn)


def test_collisions_across_servers_are_refused_and_the_rest_kept() -> None:
    from helpers import manifest

    registry = ToolRegistry(manifest())
    first = _offline_tool("a", ["b_c"])
    first.rebuild()
    registry.register_dynamic(first.name, first.spec(), first)
    second = _offline_tool("a_b", ["c", "d"])
    second.rebuild(lambda fn: ref.tool if (ref := registry.resolve(fn)) else None)
    registry.register_dynamic(second.name, second.spec(), second)
    assert registry.functions_of("mcp_a") == ["mcp_a_b_c"]
    assert registry.functions_of("mcp_a_b") == ["mcp_a_b_d"]
    assert second.problems == [
        "tool 'c' of MCP server 'a_b' is skipped: the function name 'mcp_a_b_c' already belongs to 'mcp_a'. "
        "Rename the server in Settings > MCP."
    ]


def test_sanitised_schema_inlines_refs_and_closes_objects() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Args",
        "type": "object",
        "$defs": {"Point": {"title": "Point", "type": "object", "properties": {"x": {"type": "number"}}}},
        "properties": {
            "at": {"$ref": "#/$defs/Point", "description": "where"},
            "tags": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        "required": ["at"],
    }
    assert sanitize(schema) == {
        "type": "object",
        "properties": {
            "at": {
                "type": "object",
                "properties": {"x": {"type": "number"}},
                "additionalProperties": False,
                "description": "where",
            },
            "tags": {"type": "object", "additionalProperties": {"type": "string"}},  # a map stays a map
        },
        "required": ["at"],
        "additionalProperties": False,
    }
    recursive = {"type": "object", "properties": {"node": {"$ref": "#"}}}
    assert json.dumps(sanitize(recursive)).count('"node"') > 3  # unrolled to a limit, no endless loop
    assert sanitize("not a schema") == {"type": "object", "properties": {}, "additionalProperties": False}


def test_params_model_validates_with_the_server_schema() -> None:
    model = params_model(
        "P",
        {
            "type": "object",
            "properties": {
                "file-name": {"type": "string", "minLength": 1},
                "class": {"type": "integer", "enum": [1, 2]},
                "model_config": {"type": "boolean"},
            },
            "required": ["file-name"],
        },
    )
    ok = model.model_validate({"file-name": "a.txt", "class": 2})
    assert ok.arguments() == {"file-name": "a.txt", "class": 2}  # only what was given, under the server's names
    with pytest.raises(Exception) as err:
        model.model_validate({"class": 3, "model_config": "yes"})
    assert [(e["loc"], e["msg"]) for e in err.value.errors()] == [  # type: ignore[attr-defined]
        (("file-name",), "Field required"),
        (("class",), "3 is not one of [1, 2]"),
        (("model_config",), "'yes' is not of type 'boolean'"),
    ]
    with pytest.raises(SchemaProblem, match="not valid JSON Schema"):
        params_model("Bad", {"type": "object", "properties": {"x": {"type": "no-such-type"}}})


async def test_a_server_tool_with_a_broken_schema_is_skipped_and_a_down_server_is_an_error() -> None:
    from helpers import manifest

    registry = ToolRegistry(manifest())
    tool = _offline_tool("srv", [])
    tool.connection.tools = [_tool("good"), _tool("bad", {"type": "object", "properties": {"x": {"type": 5}}})]
    tool.rebuild()
    registry.register_dynamic(tool.name, tool.spec(), tool)
    assert registry.functions_of("mcp_srv") == ["mcp_srv_good"]
    assert tool.problems[0].startswith("tool 'bad' of MCP server 'srv' is skipped: its input schema is not valid")
    # Never started: hidden with a diagnostic, and a call is refused at once.
    result = await Direct(registry).dispatch(ToolCall(id="1", name="mcp_srv_good", arguments="{}"), tool_context())
    assert result.status is ToolStatus.ERROR
    assert result.output.startswith(
        "mcp_srv_good is not available right now: [server-unavailable] MCP server 'srv' is stopped"
    )
