"""Function names (sanitising, the 64-character limit, collisions) and parameter schemas, without a server."""

from __future__ import annotations

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
    assert action_name("fs", "读取文件") == "DuQuWenJian"  # transliterated, not "tool"
    assert action_name("fs", "写入文件") == "XieRuWenJian"
    assert action_name("fs", "café/ü") == "cafe_u"
    assert action_name("fs", "🔥") == "fire"
    assert action_name("fs", "read-file v2") == "read-file_v2"


def test_two_chinese_names_both_get_a_function() -> None:
    """main turned both into 'tool' and dropped the second."""
    named, problems = assign_names("fs", ["读取文件", "写入文件", "删除"])
    assert [n.function for n in named] == ["mcp_fs_DuQuWenJian", "mcp_fs_XieRuWenJian", "mcp_fs_ShanChu"]
    assert problems == []


def test_long_names_are_cut_to_64_characters_and_stay_distinct() -> None:
    server = "s" * 32  # the longest server name settings allow
    a = action_name(server, "describe_" + "x" * 80 + "_one")
    b = action_name(server, "describe_" + "x" * 80 + "_two")
    assert a != b
    assert len(f"mcp_{server}_{a}") == 64 and len(f"mcp_{server}_{b}") == 64
    assert a.startswith("describe_xxx")


def test_clashing_names_all_get_a_function_whatever_the_order() -> None:
    """Names that sanitise alike get a hash of their original name; one that was already safe keeps it."""
    named, problems = assign_names("gh", ["get.issue", "get_issue", "get-issue", "统计", "統計"])
    functions = {n.original: n.function for n in named}
    assert problems == []
    assert functions["get_issue"] == "mcp_gh_get_issue"
    assert functions["get.issue"].startswith("mcp_gh_get_issue_") and len(functions["get.issue"]) == 25
    assert functions["get-issue"] == "mcp_gh_get-issue"
    assert functions["统计"] != functions["統計"] and all(
        functions[k].startswith("mcp_gh_TongJi_") for k in ("统计", "統計")
    )
    again, _ = assign_names("gh", ["統計", "get-issue", "get_issue", "统计", "get.issue"])
    assert {n.original: n.function for n in again} == functions  # the server's order does not matter


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


def test_sanitised_schema_inlines_refs_and_keeps_the_servers_openness() -> None:
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
            # as the server wrote it: an object that does not say it is closed is not closed here either
            "at": {"type": "object", "properties": {"x": {"type": "number"}}, "description": "where"},
            "tags": {"type": "object", "additionalProperties": {"type": "string"}},  # a map stays a map
        },
        "required": ["at"],
        "additionalProperties": False,  # the root: the dispatcher refuses arguments the server does not name
    }
    recursive = {"type": "object", "properties": {"node": {"$ref": "#"}}}
    assert sanitize(recursive) == {
        "type": "object",
        "properties": {
            "node": {
                "type": "object",
                "description": "(recursive: the same structure as the whole arguments object; "
                "its inner levels are not spelled out here)",
            }
        },
        "additionalProperties": False,
    }
    assert sanitize("not a schema") == {"type": "object", "properties": {}, "additionalProperties": False}


def test_a_root_that_allows_more_arguments_accepts_them() -> None:
    model = params_model("Free", {"type": "object", "additionalProperties": True})
    assert model.model_json_schema() == {"type": "object", "additionalProperties": True, "properties": {}}
    params = model.model_validate({"anything": 1, "nested": {"a": [1]}})
    assert params.arguments() == {"anything": 1, "nested": {"a": [1]}}
    typed = params_model(
        "Typed",
        {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "string"}},
    )
    assert typed.model_validate({"a": 1, "b": "x"}).arguments() == {"a": 1, "b": "x"}
    with pytest.raises(Exception, match="is not of type 'string'"):
        typed.model_validate({"a": 1, "b": 2})


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
