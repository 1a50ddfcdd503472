"""OAuth 2.1 for a remote server through the SDK's client, against our SDK server behind the SDK's own
authorization server (dynamic client registration, PKCE, a loopback redirect, tokens in the keyring,
refresh after expiry, and nothing on disk but settings without a token)."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx2 as httpx
import pytest
from mcp_support import SDK_SERVER, start_server, stop_server
from toolrun import Direct, tool_context

from weclaw_desktop.mcp import Backoff, McpManager, ServerState
from weclaw_desktop.mcp.interact import ClientHooks
from weclaw_desktop.mcp.oauth import KeyringTokenStorage, oauth_key
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import McpServerSettings
from weclaw_desktop.toolkit import AutoApprove, ToolCall, ToolRegistry


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def oauth_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """Our SDK server behind OAuth on 127.0.0.1 (tokens live 2 s, so the second connection must refresh)."""
    port, calls = _port(), tmp_path / "oauth-calls.txt"
    proc = start_server(
        [sys.executable, str(SDK_SERVER), "http", str(port), "--oauth"],
        port,
        tmp_path,
        env={"WECLAW_TEST_CALLS": str(calls), "TOKEN_TTL": "2"},
    )
    yield f"http://127.0.0.1:{port}/mcp", calls
    stop_server(proc)


class Browser:
    """The user's browser: follows the authorization page's redirect to our loopback listener."""

    def __init__(self) -> None:
        self.opened: list[str] = []

    async def open(self, url: str) -> None:
        self.opened.append(url)
        async with httpx.AsyncClient(follow_redirects=True, timeout=10) as client:
            response = await client.get(url)
            assert response.status_code == 200, response.text
            assert "Signed in" in response.text


def _events(calls: Path) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for line in calls.read_text(encoding="utf-8").splitlines() if calls.exists() else []:
        name, _, args = line.partition(" ")
        out.append((name, json.loads(args) if args else {}))
    return out


async def _connect(registry: ToolRegistry, settings: McpServerSettings, browser: Browser, tmp_path: Path) -> McpManager:
    manager = McpManager(
        registry,
        SecretStore(),
        backoff=Backoff(initial=30.0),
        connect_timeout=20,
        log_dir=tmp_path,
        hooks=ClientHooks(open_url=browser.open),
    )
    tool = manager.start(settings)
    assert tool is not None
    assert await tool.connection.wait_for(ServerState.CONNECTED, ServerState.DOWN, within=40)
    assert tool.connection.state is ServerState.CONNECTED, tool.connection.error
    return manager


async def test_sign_in_once_then_refresh_from_the_keyring(
    registry: ToolRegistry, oauth_server: tuple[str, Path], memory_keyring: Any, tmp_path: Path
) -> None:
    import asyncio

    url, calls = oauth_server
    settings = McpServerSettings(name="cloud", transport="http", url=url, auth="oauth", trusted=True)
    browser = Browser()
    manager = await _connect(registry, settings, browser, tmp_path)
    try:
        result = await Direct(registry, gate=AutoApprove()).dispatch(
            ToolCall(id="1", name="mcp_cloud_lookup", arguments='{"word": "cat"}'), tool_context()
        )
        assert result.output == "cat: a word"
    finally:
        await manager.stop_all()
    [opened] = browser.opened
    assert "code_challenge=" in opened and "code_challenge_method=S256" in opened  # PKCE
    store = SecretStore()
    storage = KeyringTokenStorage("cloud", store)
    tokens = await storage.get_tokens()
    assert tokens is not None and tokens.refresh_token
    port = store.get(oauth_key("cloud", "port"))
    assert port and f"redirect_uri=http://127.0.0.1:{port}/callback" in unquote(opened)  # loopback, kept per server
    events = [name for name, _ in _events(calls)]
    assert events[:3] == ["oauth_register", "oauth_authorize", "oauth_token"]

    await asyncio.sleep(2.5)  # the access token expires; the next start refreshes it without the browser
    again = Browser()
    manager = await _connect(registry, settings, again, tmp_path)
    try:
        result = await Direct(registry, gate=AutoApprove()).dispatch(
            ToolCall(id="2", name="mcp_cloud_lookup", arguments='{"word": "dog"}'), tool_context()
        )
        assert result.output == "dog: a word"
    finally:
        await manager.stop_all()
    assert again.opened == []  # no second sign-in
    grants = [args["grant"] for name, args in _events(calls) if name == "oauth_token"]
    assert grants == ["authorization_code", "refresh_token"]
    refreshed = await storage.get_tokens()
    assert refreshed is not None and refreshed.access_token != tokens.access_token


async def test_without_a_sign_in_the_server_is_down_with_a_reason(
    registry: ToolRegistry, oauth_server: tuple[str, Path], memory_keyring: Any, tmp_path: Path
) -> None:
    """A server that needs OAuth but the entry does not say so: a clear error, no browser, no token."""
    url, _ = oauth_server
    manager = McpManager(registry, SecretStore(), backoff=Backoff(initial=30.0), connect_timeout=10, log_dir=tmp_path)
    tool = manager.start(McpServerSettings(name="cloud", transport="http", url=url))
    assert tool is not None
    try:
        assert await tool.connection.wait_for(ServerState.DOWN, within=20)
        assert "HTTP 401" in tool.connection.error
    finally:
        await manager.stop_all()
