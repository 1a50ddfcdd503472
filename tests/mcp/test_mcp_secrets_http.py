"""Secrets from the keyring reach the server (environment or headers) and nothing else; HTTP transport."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from typing import Any

import pytest
from toolrun import Direct, tool_context

from weclaw_desktop.mcp import McpManager, ServerState, secret_key
from weclaw_desktop.paths import app_paths
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import McpServerSettings, Settings, SettingsStore
from weclaw_desktop.toolkit import (
    AutoApprove,
    Code,
    MemoryAudit,
    Policy,
    ToolCall,
    ToolRegistry,
    ToolStatus,
    plan,
)

TOKEN = "tok-5f1e9c2a-secret-value-77"


def call(function: str, /, **arguments: object) -> ToolCall:
    return ToolCall(id="c1", name=function, arguments=json.dumps(arguments))


async def settle(manager: McpManager, name: str) -> ServerState:
    tool = manager.tool(name)
    assert tool is not None
    assert await tool.connection.wait_for(ServerState.CONNECTED, ServerState.DOWN, within=20)
    return tool.connection.state


async def test_env_secret_reaches_the_server_but_no_log_audit_or_error(
    manager: McpManager,
    registry: ToolRegistry,
    stdio_settings: Callable[..., McpServerSettings],
    memory_keyring: Any,
    caplog: pytest.LogCaptureFixture,
    server_calls: Callable[[], list[str]],
) -> None:
    caplog.set_level(logging.DEBUG)
    SecretStore().set(secret_key("sec", "env", "TEST_TOKEN"), TOKEN)
    settings = stdio_settings("sec", secret_env=["TEST_TOKEN"])
    SettingsStore.open().save(Settings(mcp_servers=[settings]))
    manager.start(settings)
    assert await settle(manager, "sec") is ServerState.CONNECTED

    audit = MemoryAudit()
    dispatcher = Direct(registry, gate=AutoApprove(), audit=audit)
    ok = await dispatcher.dispatch(call("mcp_sec_env_digest", name="TEST_TOKEN"), tool_context())
    assert ok.output == hashlib.sha256(TOKEN.encode()).hexdigest()  # the server got the value

    leaky = await dispatcher.dispatch(call("mcp_sec_fail_with_env", name="TEST_TOKEN"), tool_context())
    assert leaky.status is ToolStatus.ERROR
    assert "the token *** was refused" in leaky.output
    assert TOKEN not in leaky.output and TOKEN not in (leaky.error or "")
    assert server_calls() == ["env_digest", "fail_with_env"]

    await manager.stop("sec")
    records = [r.getMessage() + (r.exc_text or "") for r in caplog.records]
    assert records and not [r for r in records if TOKEN in r]
    assert audit.records and not [r for r in audit.records if TOKEN in r.model_dump_json()]
    assert audit.records[1].error_summary.startswith("sec.fail_with_env failed")
    assert TOKEN not in app_paths().settings_file.read_text()
    log_file = manager.log_dir / "mcp-sec.log"  # type: ignore[operator]
    assert log_file.exists() and TOKEN not in log_file.read_text()  # the server's stderr, redacted


async def test_a_missing_secret_is_reported_and_nothing_starts(
    manager: McpManager,
    registry: ToolRegistry,
    stdio_settings: Callable[..., McpServerSettings],
    memory_keyring: Any,
    server_calls: Callable[[], list[str]],
) -> None:
    manager.start(stdio_settings("sec", secret_env=["TEST_TOKEN"]))
    assert await settle(manager, "sec") is ServerState.DOWN
    [diag] = plan(registry, Policy()).hidden["mcp_sec"]
    assert diag.code is Code.AUTH_MISSING
    assert "the secret mcp.sec.env.TEST_TOKEN not in the keyring; enter it in Settings > MCP" in diag.message
    assert manager.tool("sec").connection.retry_at is None  # type: ignore[union-attr]  # waits for the user
    assert server_calls() == []


async def test_http_server_with_a_header_secret(
    manager: McpManager,
    registry: ToolRegistry,
    http_settings: Callable[..., McpServerSettings],
    http_key: str,
    http_calls: Callable[[], list[str]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    manager.start(http_settings(trusted=True))
    assert await settle(manager, "web") is ServerState.CONNECTED, manager.status("web").message
    assert "mcp_web_place_order" in registry.functions_of("mcp_web")

    dispatcher = Direct(registry, gate=AutoApprove())
    result = await dispatcher.dispatch(call("mcp_web_add", a=20, b=22), tool_context())
    assert result.data == {"result": 42}
    result = await dispatcher.dispatch(call("mcp_web_add", a=1), tool_context())
    assert result.output == "Invalid arguments for mcp_web_add:\n- b: Field required\nFix the arguments and call again."

    result = await dispatcher.dispatch(call("mcp_web_pixel"), tool_context(outputs_dir=app_paths().outputs))
    assert result.succeeded and len(result.files) == 1
    assert result.files[0].endswith(".png") and result.output == f"[image image/png saved to {result.files[0]}]"
    # Progress notifications reach the call's progress callback (the tool panel's progress bar).
    seen: list[tuple[float | None, str]] = []
    ctx = tool_context(progress_callback=lambda fraction, message: seen.append((fraction, message)))
    result = await dispatcher.dispatch(call("mcp_web_count", to=2), ctx)
    assert result.output == "counted to 2"
    assert seen == [(0.5, "step 1"), (1.0, "step 2")]
    assert http_calls() == ["add", "pixel", "count"]
    await manager.stop("web")
    assert not [r for r in caplog.records if http_key in r.getMessage()]


async def test_http_server_refusing_the_credentials_is_hidden_with_the_reason(
    manager: McpManager, registry: ToolRegistry, http_settings: Callable[..., McpServerSettings]
) -> None:
    SecretStore().set(secret_key("web", "header", "X-Api-Key"), "wrong-key-123456")
    manager.start(http_settings())
    assert await settle(manager, "web") is ServerState.DOWN
    [diag] = plan(registry, Policy()).hidden["mcp_web"]
    assert diag.code is Code.SERVER_UNAVAILABLE
    assert "refused the credentials (HTTP 401)" in diag.message, diag.message
    assert "wrong-key-123456" not in diag.message


async def test_http_url_where_nothing_listens(manager: McpManager, registry: ToolRegistry) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    manager.start(McpServerSettings(name="nobody", transport="http", url=f"http://127.0.0.1:{port}/mcp"))
    assert await settle(manager, "nobody") is ServerState.DOWN
    [diag] = plan(registry, Policy()).hidden["mcp_nobody"]
    assert "nothing answers at that URL (connection refused or unreachable)" in diag.message, diag.message
