"""A stdio MCP server with more tools than the 128-function cap lets through (WECLAW_TEST_TOOLS, default 150).

``op_000`` ... are plain numbered operations; the last one converts temperatures, so a tool_search for
"convert a temperature" must find exactly it. Each call answers with its name and arguments.
"""

from __future__ import annotations

import json
import os
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

COUNT = int(os.environ.get("WECLAW_TEST_TOOLS", "150"))
SCHEMA = {"type": "object", "properties": {"value": {"type": "number"}}}


def _tools() -> list[types.Tool]:
    tools = [
        types.Tool(name=f"op_{i:03d}", description=f"Numbered operation {i} of the batch.", input_schema=SCHEMA)
        for i in range(COUNT - 1)
    ]
    last = types.Tool(
        name=f"op_{COUNT - 1:03d}",
        description="Convert a temperature from Celsius to Kelvin.",
        input_schema={"type": "object", "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]},
    )
    return [*tools, last]


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=_tools())


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    answer = f"{params.name} {json.dumps(args)}"
    if "celsius" in args:
        answer = f"{float(args['celsius']) + 273.15:.2f} K"
    return types.CallToolResult(content=[types.TextContent(type="text", text=answer)])


server: Server[Any] = Server("weclaw-many-tools", on_list_tools=list_tools, on_call_tool=call_tool)


async def _run() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(_run)
