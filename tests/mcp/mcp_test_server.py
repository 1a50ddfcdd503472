"""A real MCP server for the tests, written with the SDK (MCPServer, which was FastMCP before mcp 2).

Run ``python mcp_test_server.py`` for stdio, or ``python mcp_test_server.py http PORT`` for streamable
HTTP on 127.0.0.1 (then, when EXPECTED_API_KEY is set, every request must carry it in X-Api-Key).
Each call is appended to the file named by WECLAW_TEST_CALLS, so tests can tell whether the server was
called at all.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import sys
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ImageContent, ToolAnnotations
from pydantic import BaseModel, Field

app = MCPServer("weclaw-test", instructions="A test server with arithmetic, environment checks and failures.")

PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def record(name: str) -> None:
    path = os.environ.get("WECLAW_TEST_CALLS")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(name + "\n")


@app.tool(annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    record("add")
    return a + b


@app.tool()
def env_digest(name: str) -> str:
    """SHA-256 of an environment variable of the server (never the value itself)."""
    record("env_digest")
    value = os.environ.get(name)
    return hashlib.sha256(value.encode()).hexdigest() if value is not None else "unset"


@app.tool()
def fail_with_env(name: str) -> str:
    """Fails with a message that contains an environment variable's value (a leaky server)."""
    record("fail_with_env")
    print(f"refusing token {os.environ.get(name, '')}", file=sys.stderr, flush=True)
    raise ToolError(f"the token {os.environ.get(name, '')} was refused")


@app.tool()
def crash() -> str:
    """Kills the server process."""
    record("crash")
    sys.stdout.flush()
    os._exit(3)


@app.tool()
async def hang(seconds: float = 30.0) -> str:
    """Sleeps, then answers."""
    record("hang")
    await asyncio.sleep(seconds)
    return "done"


class Item(BaseModel):
    sku: str = Field(description="Product code")
    qty: int = Field(ge=1, description="How many")


class Order(BaseModel):
    customer: str
    items: list[Item] = Field(min_length=1)


@app.tool()
def place_order(order: Order, note: str = "") -> dict[str, Any]:
    """Place an order (nested schema with $defs)."""
    record("place_order")
    return {"customer": order.customer, "units": sum(i.qty for i in order.items), "note": note}


@app.tool()
def pixel() -> list[ImageContent]:
    """A 1x1 PNG image."""
    record("pixel")
    return [ImageContent(type="image", data=PNG_1PX, mime_type="image/png")]


@app.tool(name="weird.name/ü")
def weird() -> str:
    """A tool whose name needs sanitising."""
    record("weird")
    return "weird ok"


@app.tool(name="dup.name")
def dup_dot() -> str:
    """First of two names that sanitise to the same action (gets a hash suffix)."""
    return "dot"


@app.tool(name="dup_name")
def dup_underscore() -> str:
    """Second of two names that sanitise to the same action (keeps its own name, which was safe already)."""
    return "underscore"


@app.tool()
def broken_schema() -> str:
    """A tool whose input schema is not valid JSON Schema (skipped by the client, with a problem shown)."""
    return "never"


_broken = app._tool_manager.get_tool("broken_schema")
assert _broken is not None
_broken.parameters = {"type": "object", "properties": {"x": {"type": 5}}}


LONG = "a_really_long_tool_name_that_goes_on_and_on_" + "x" * 40


@app.tool(name=LONG)
def long_name() -> str:
    """A tool whose name is longer than the function name limit allows."""
    return "long ok"


@app.tool()
async def count(to: int, ctx: Context) -> str:
    """Counts up, reporting progress."""
    record("count")
    for i in range(1, to + 1):
        await ctx.report_progress(i, to, f"step {i}")
    return f"counted to {to}"


def grown() -> str:
    """A tool added while the server runs."""
    return "grown ok"


@app.tool()
async def grow(ctx: Context) -> str:
    """Adds the tool 'grown' and tells the client its tool list changed."""
    record("grow")
    app.add_tool(grown, name="grown")
    await ctx.request_context.session.send_tool_list_changed()
    return "grew"


@app.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


def main() -> None:
    if len(sys.argv) >= 3 and sys.argv[1] == "http":
        import uvicorn

        inner = app.streamable_http_app(host="127.0.0.1")
        expected = os.environ.get("EXPECTED_API_KEY", "")

        async def guarded(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http" and expected:
                headers = dict(scope.get("headers") or [])
                if headers.get(b"x-api-key", b"").decode() != expected:
                    await send({"type": "http.response.start", "status": 401, "headers": []})
                    await send({"type": "http.response.body", "body": b"unauthorized"})
                    return
            await inner(scope, receive, send)

        uvicorn.run(guarded, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
    else:
        app.run()


if __name__ == "__main__":
    main()
