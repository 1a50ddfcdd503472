"""The tool index and the tool_search tool, end to end with the real catalogue and the exposer."""

from __future__ import annotations

import pytest
from toolrun import tool_context

from weclaw_desktop.intent.exposure import ProgressiveExposer
from weclaw_desktop.intent.factory import make_tool_index
from weclaw_desktop.intent.index import ToolIndex, ToolIndexBridge
from weclaw_desktop.toolkit.base import BaseTool, BridgeMissingError, ToolContext, ToolResult, action
from weclaw_desktop.toolkit.manifest import ToolSpec
from weclaw_desktop.toolkit.registry import ToolRegistry
from weclaw_desktop.tools.tool_search import FindParams, ToolSearchTool


def names(index: ToolIndex, query: str) -> list[str]:
    return [h.name for h in index.find(query)]


def test_index_finds_tools_by_need_in_both_languages(real_registry: ToolRegistry) -> None:
    index = make_tool_index(real_registry)
    assert isinstance(index, ToolIndexBridge)
    assert "archive" in names(index, "压缩文件夹")[:2]  # with file (folders): both are exposed
    assert names(index, "send a file to my phone")[0] == "remote_file_share"
    assert names(index, "我的待办清单")[0] == "todo"
    assert names(index, "take a picture of the screen")[0] == "screen"
    assert names(index, "how busy is the processor")[0] == "system_info"
    assert "tool_search" not in names(index, "find tools")  # the meta tool never finds itself


def test_index_lists_at_most_search_results_and_describes_each_hit(real_registry: ToolRegistry) -> None:
    index = ToolIndex(real_registry)
    hits = index.find("file")
    assert 1 <= len(hits) <= real_registry.manifest.exposure.search_results
    top = hits[0]
    assert top.name == "file"
    assert top.description == real_registry.spec("file").description.en
    assert top.functions == tuple(real_registry.functions_of("file"))
    assert index.find("截图")[0].description == real_registry.spec("screen").description.zh


def test_a_tool_named_in_the_query_ranks_first(real_registry: ToolRegistry) -> None:
    index = ToolIndex(real_registry)
    assert names(index, "use chat_history please")[0] == "chat_history"
    assert names(index, "with the web tool")[0] == "web"
    assert names(index, "把它用 open 工具打开")[0] == "open"


def test_tools_that_cannot_be_offered_now_are_not_found(real_registry: ToolRegistry) -> None:
    index = ToolIndex(real_registry, visible=lambda: {"file", "email"})
    assert names(index, "zip the folder and send it to my phone") == ["file", "email"]  # not archive, phone


def test_nonsense_finds_nothing(real_registry: ToolRegistry) -> None:
    assert ToolIndex(real_registry).find("qwxzv plorkt") == []


class WeatherTool(BaseTool):
    @action("Forecast for a city.")
    async def forecast(self, params: FindParams, ctx: ToolContext) -> ToolResult:
        return ToolResult.ok("sunny")


def test_dynamic_tools_are_indexed_after_the_registry_changes(real_registry: ToolRegistry) -> None:
    index = ToolIndex(real_registry)
    assert "meteo" not in names(index, "meteorology forecast for a city")
    spec = ToolSpec.model_validate(
        {
            "module": "x",
            "class": "WeatherTool",
            "actions": ["forecast"],
            "description": {"en": "Meteorology forecast for any city (MCP)."},
            "display": {"name": {"en": "Meteo"}},
        }
    )
    real_registry.register_dynamic("meteo", spec, WeatherTool())
    assert "meteo" in names(index, "meteorology forecast for a city")[:2]
    real_registry.unregister_dynamic("meteo")
    assert "meteo" not in names(index, "meteorology forecast for a city")


async def test_tool_search_result_is_exposed_in_the_next_round(real_registry: ToolRegistry) -> None:
    real_registry.inject({"tool_index": make_tool_index(real_registry)})
    tool = real_registry.get("tool_search")
    assert isinstance(tool, ToolSearchTool)
    turn = ProgressiveExposer(real_registry).start_turn("今天心情不错")
    visible = real_registry.tool_names()
    assert turn.for_round(visible).tools == ["tool_search"]

    result = await tool.execute("find", FindParams(query="把文件夹打包成 zip"), tool_context())
    assert result.succeeded
    assert result.data["tools"][0] == "archive"
    assert "archive_zip" in result.output  # the model learns the function names
    turn.note_result("tool_search", "find", result)
    nxt = turn.for_round(visible)
    assert "archive" in nxt.tools
    assert nxt.reasons["archive"] == "found by tool_search"


async def test_tool_search_with_nothing_found_says_what_to_do(real_registry: ToolRegistry) -> None:
    real_registry.inject({"tool_index": make_tool_index(real_registry)})
    result = await real_registry.get("tool_search").execute("find", FindParams(query="qwxzv plorkt"), tool_context())
    assert result.succeeded
    assert result.data == {"tools": []}
    assert "Answer from your own knowledge" in result.output


async def test_tool_search_without_its_bridge_fails_clearly(real_registry: ToolRegistry) -> None:
    tool = real_registry.get("tool_search")
    with pytest.raises(BridgeMissingError, match="tool_index service is not connected"):
        await tool.execute("find", FindParams(query="zip"), tool_context())


def test_query_must_not_be_empty() -> None:
    with pytest.raises(ValueError):
        FindParams(query="")


def test_the_index_has_its_own_similarity_beyond_the_routing_keywords(real_registry: ToolRegistry) -> None:
    """tool_search must find a tool where routing's keywords have a gap: a typo, another form of a word, or
    words only the tool's description and examples hold — with the engine's opinion left out entirely."""
    index = ToolIndex(real_registry)

    def own(query: str) -> list[str]:
        sims = index.similarity(query)
        return sorted((t for t in sims if sims[t] > 0), key=lambda t: -sims[t])[:3]

    assert "reminder" in own("remnid me tomorow morning")  # typos: the first letters still meet
    assert "archive" in own("compression of a directory")  # 'compress' in the description
    assert "system_info" in own("电脑电池还能用多久")  # single characters and the description
    assert own("qwxzv plorkt") == []


def test_a_dynamic_tools_action_descriptions_are_searchable(real_registry: ToolRegistry) -> None:
    """An MCP server's tools are described per action; those descriptions find the server's tool."""
    spec = ToolSpec.model_validate(
        {
            "module": "x",
            "class": "WeatherTool",
            "actions": ["forecast"],
            "description": {"en": "MCP server 'meteo'."},
            "display": {"name": {"en": "Meteo"}},
            "config": {"keywords": ["天气预报"]},
        }
    )
    real_registry.register_dynamic("meteo", spec, WeatherTool())
    index = ToolIndex(real_registry)
    assert "meteo" in names(index, "forecast for a city")[:3]  # the action's own description
    assert "meteo" in names(index, "天气预报")[:3]  # the keywords the server was given
    real_registry.unregister_dynamic("meteo")
