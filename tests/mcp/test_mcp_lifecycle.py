"""Crashes, hangs, failed starts, backoff and process cleanup, with the real test server over stdio."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from polling import reached
from toolrun import Direct, tool_context

from weclaw_desktop.mcp import Backoff, McpManager, ServerState
from weclaw_desktop.settings import McpServerSettings
from weclaw_desktop.toolkit import (
    AutoApprove,
    Code,
    Policy,
    ToolCall,
    ToolRegistry,
    ToolStatus,
)
from weclaw_desktop.toolkit import plan as make_plan


def call(function: str, /, **arguments: object) -> ToolCall:
    return ToolCall(id="c1", name=function, arguments=json.dumps(arguments))


async def start(manager: McpManager, settings: McpServerSettings, state: ServerState = ServerState.CONNECTED) -> None:
    tool = manager.start(settings)
    assert tool is not None
    assert await tool.connection.wait_for(state, within=20), tool.connection.status_text()


async def server_pid(dispatcher: Direct, server: str = "test") -> int:
    result = await dispatcher.dispatch(call(f"mcp_{server}_pid"), tool_context())
    assert result.succeeded, result.output
    return int(result.data["result"])


async def wait_until(condition: Callable[[], bool], within: float = 5.0) -> bool:
    return await reached(condition, within=within, interval=0.02)


def gone(pid: int) -> bool:
    """True when the process no longer exists (exited and reaped: no zombie left)."""
    return not Path(f"/proc/{pid}").exists()


async def wait_gone(pid: int, within: float = 5.0) -> bool:
    return await reached(lambda: gone(pid), within=within, interval=0.05)


linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


async def test_crash_hides_the_tool_then_it_reconnects_with_backoff_and_works(
    manager: McpManager, registry: ToolRegistry, stdio_settings: Callable[..., McpServerSettings]
) -> None:
    await start(manager, stdio_settings())
    conn = manager.tool("test").connection  # type: ignore[union-attr]
    conn.backoff = Backoff(initial=1.5)  # long enough to look at it while it is down, even on a busy machine
    dispatcher = Direct(registry, gate=AutoApprove())
    result = await dispatcher.dispatch(call("mcp_test_crash"), tool_context())
    assert result.status is ToolStatus.ERROR
    assert result.output.startswith("MCP server 'test' closed the connection during the call (it may have crashed).")

    assert await conn.wait_for(ServerState.DOWN, within=5)
    hidden = make_plan(registry, Policy()).hidden["mcp_test"]
    assert [d.code for d in hidden] == [Code.SERVER_UNAVAILABLE]
    assert "is not running: the connection closed during a call" in hidden[0].message
    assert "retrying in" in hidden[0].message

    # A call while it is down is a prompt tool error, not a hang.
    t0 = time.perf_counter()
    result = await dispatcher.dispatch(call("mcp_test_add", a=1, b=2), tool_context())
    assert time.perf_counter() - t0 < 0.5
    assert result.status is ToolStatus.ERROR
    assert result.output.startswith("mcp_test_add is not available right now: [server-unavailable] MCP server 'test'")

    assert await conn.wait_for(ServerState.CONNECTED, within=20), conn.status_text()
    assert make_plan(registry, Policy()).is_visible("mcp_test")
    result = await dispatcher.dispatch(call("mcp_test_add", a=1, b=2), tool_context())
    assert result.data == {"result": 3}


async def test_backoff_grows_while_the_server_cannot_start(
    manager: McpManager, registry: ToolRegistry, tmp_path: Path
) -> None:
    settings = McpServerSettings(name="missing", command=str(tmp_path / "no-such-server"))
    manager.backoff = Backoff(initial=0.2, factor=2.0, maximum=1.0)
    await start(manager, settings, ServerState.DOWN)
    conn = manager.tool("missing").connection  # type: ignore[union-attr]
    assert conn.error == f"the command '{tmp_path / 'no-such-server'}' was not found; check the path or install it"
    delays = []
    for _ in range(4):
        assert conn.retry_at is not None
        delays.append(conn.retry_delay)
        attempts = conn.attempts
        assert await wait_until(lambda: conn.attempts != attempts)  # noqa: B023 - used at once
        assert await conn.wait_for(ServerState.DOWN, within=5)
    assert delays == [0.2, 0.4, 0.8, 1.0]  # doubling, capped at the maximum
    diag = make_plan(registry, Policy()).hidden["mcp_missing"][0]
    assert diag.code is Code.SERVER_UNAVAILABLE
    assert diag.hint.startswith("It reconnects by itself")


async def test_a_server_that_dies_at_start_shows_its_last_words(manager: McpManager, registry: ToolRegistry) -> None:
    script = "import sys; print('config file broken: line 3', file=sys.stderr); sys.exit(2)"
    settings = McpServerSettings(name="dies", command=sys.executable, args=["-c", script])
    await start(manager, settings, ServerState.DOWN)
    message = make_plan(registry, Policy()).hidden["mcp_dies"][0].message
    assert message.startswith("MCP server 'dies' is not running: it closed the connection while starting")
    assert "its last output: config file broken: line 3" in message
    log_file = manager.log_dir / "mcp-dies.log"  # type: ignore[operator]
    assert "config file broken: line 3" in log_file.read_text()


async def test_a_hanging_tool_times_out_and_the_server_stays_usable(
    manager: McpManager, registry: ToolRegistry, http_settings: Callable[..., McpServerSettings]
) -> None:
    await start(manager, http_settings(timeout_s=0.5))
    dispatcher = Direct(registry, gate=AutoApprove())
    t0 = time.perf_counter()
    result = await dispatcher.dispatch(call("mcp_web_hang", seconds=5), tool_context())
    assert time.perf_counter() - t0 < 3
    assert result.status is ToolStatus.TIMEOUT
    assert result.output == (
        "web.hang did not finish within 0.5 s and was cancelled. "
        "Try a smaller request or tell the user it takes too long."
    )
    await asyncio.sleep(0.3)  # the health check after a timeout finds the server alive
    assert manager.tool("web").connection.state is ServerState.CONNECTED  # type: ignore[union-attr]
    result = await dispatcher.dispatch(call("mcp_web_add", a=4, b=4), tool_context())
    assert result.data == {"result": 8}


@linux_only
async def test_stop_and_cancellation_leave_no_server_process(
    manager: McpManager, registry: ToolRegistry, stdio_settings: Callable[..., McpServerSettings]
) -> None:
    # Two servers start side by side: one is stopped, the other's task is cancelled (the app quitting hard).
    manager.start(stdio_settings("test"))
    manager.start(stdio_settings("other"))
    await manager.wait_settled(20)
    dispatcher = Direct(registry, gate=AutoApprove())
    pid = await server_pid(dispatcher, "test")
    other_pid = await server_pid(dispatcher, "other")

    # A call cancelled half-way (the user pressed stop) does not break the connection.
    task = asyncio.ensure_future(dispatcher.dispatch(call("mcp_test_hang", seconds=30), tool_context()))
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    result = await dispatcher.dispatch(call("mcp_test_add", a=1, b=1), tool_context())
    assert result.data == {"result": 2}

    await manager.stop("test")
    assert await wait_gone(pid), f"server process {pid} is still there after stop"
    assert not registry.has_tool("mcp_test")

    conn = manager.tool("other").connection  # type: ignore[union-attr]
    assert conn._task is not None
    conn._task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await conn._task
    assert await wait_gone(other_pid), f"server process {other_pid} is still there after cancellation"
    assert conn.state is ServerState.STOPPED


async def test_apply_follows_the_settings(
    manager: McpManager, registry: ToolRegistry, http_settings: Callable[..., McpServerSettings]
) -> None:
    first = http_settings()
    await manager.apply([first, McpServerSettings(name="off", enabled=False, command="x")])
    assert manager.servers() == ["web"] and registry.is_dynamic("mcp_web")
    assert not registry.has_tool("mcp_off")
    conn = manager.tool("web").connection  # type: ignore[union-attr]
    await manager.apply([first])
    assert manager.tool("web").connection is conn  # unchanged settings: not restarted  # type: ignore[union-attr]
    await manager.apply([first.model_copy(update={"trusted": True})])
    assert manager.tool("web").connection is not conn  # type: ignore[union-attr]
    assert registry.spec("mcp_web").risk.value == "low"
    await manager.apply([])
    assert manager.servers() == [] and not registry.has_tool("mcp_web")
