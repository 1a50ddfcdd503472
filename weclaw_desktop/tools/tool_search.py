"""tool_search: the model asks for tools by describing a need; what it finds is exposed next round.

Routing sends the model only the tools a request seems to need. When that misses, the model calls
``tool_search_find`` with a few words; the ``tool_index`` bridge (``weclaw_desktop.intent.index``) ranks
every enabled tool, and the exposer picks the names in ``data["tools"]`` up from the result, so those
tools are callable from the next round of the same turn. For an MCP server the functions that match best
are named too (``data["functions"]``): offered first, even when the 128-function cap leaves others out.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.toolkit.base import BaseTool, ToolContext, ToolError, ToolResult, action


class FindParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(
        min_length=1,
        max_length=300,
        description="The need in a few words, in any language, e.g. 'send a file to my phone' or '压缩文件夹'",
    )


class ToolSearchTool(BaseTool):
    @action(
        "Find tools for a need that the tools you have now do not cover. Describe the need in a few words; "
        "the tools found can be called from your next step. Use it instead of guessing or saying you cannot."
    )
    async def find(self, params: FindParams, ctx: ToolContext) -> ToolResult:
        query = params.query.strip()
        if not query:
            raise ToolError("The query is empty: describe the need in a few words, e.g. 'take a screenshot'.")
        hits = self.bridge("tool_index").find(query)
        if not hits:
            return ToolResult.ok(
                f"No tool matches '{query}'. Answer from your own knowledge, or ask the user what they need.",
                data={"tools": []},
            )
        lines = [f"- {h.name}: {h.description} (functions: {_functions(h)})" for h in hits]
        return ToolResult.ok(
            f"Found {len(hits)} tool(s) for '{query}'; you can call them from your next step:\n" + "\n".join(lines),
            data={"tools": [h.name for h in hits], "functions": [f for h in hits for f in h.matched]},
        )


SHOWN_FUNCTIONS = 24


def _functions(hit: Any) -> str:  # a ToolHit of the tool_index bridge
    """The hit's functions, the ones matching the query first; a long list (an MCP server) is shortened."""
    names = [*hit.matched, *(f for f in hit.functions if f not in hit.matched)]
    more = len(names) - SHOWN_FUNCTIONS
    return ", ".join(names[:SHOWN_FUNCTIONS]) + (f" and {more} more" if more > 0 else "")
