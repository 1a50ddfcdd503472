"""MCP servers in first-round routing: the server's keywords, its name, its tool names and (to fill a gap
only) its tool descriptions expose it without a tool_search round trip (``intent/dynamic.py``).

What must hold: "use my git server to show the log" offers the real mcp-server-git's tools in the first
request and the model's call reaches the server; a keyword the user gave the server (Chinese or English)
exposes it; requests that do not ask for it (chat, a built-in job, a question) leave it out; the built-in
routing is the engine's, unchanged.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fakeopenai import FakeOpenAI, call, text_reply, tool_reply
from mcp_support import have_module, need
from polling import reached

from weclaw_desktop.cli import main
from weclaw_desktop.intent.exposure import ProgressiveExposer, always_on
from weclaw_desktop.mcp import McpManager, ServerState
from weclaw_desktop.settings import McpServerSettings, Settings, SettingsStore
from weclaw_desktop.toolkit.registry import ToolRegistry


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    path = tmp_path / "repo"
    path.mkdir()
    run: dict[str, Any] = {"cwd": path, "check": True, "capture_output": True}
    subprocess.run(["git", "init", "-q", "-b", "main"], **run)
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=T", "commit", "-q", "--allow-empty", "-m", "first"],
        **run,
    )
    yield path


async def test_use_my_git_server_offers_its_tools_in_the_first_round(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, capsys: Any, repo: Path
) -> None:
    """The real mcp-server-git, progressive exposure: the first request already carries git_log."""
    need("mcp-server-git", have_module("mcp_server_git"))
    SettingsStore.open().save(
        Settings(mcp_servers=[McpServerSettings(name="git", command=sys.executable, args=["-m", "mcp_server_git"])])
    )
    fake_openai.push(
        tool_reply(call("mcp_git_git_log", {"repo_path": str(repo), "max_count": 5}, id="g1")),
        text_reply("One commit: first."),
    )
    monkeypatch.setenv("WECLAW_API_KEY", "sk-routing-test")
    argv = ["chat", "--new", "--yes", "--base-url", fake_openai.base_url, "--model", "fake-model"]
    code = await asyncio.to_thread(main, [*argv, "use my git server to show the log"])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    first = fake_openai.tool_names(0)
    assert "mcp_git_git_log" in first and "mcp_git_git_status" in first
    results = [str(m["content"]) for m in fake_openai.messages(-1) if m["role"] == "tool"]
    assert any("first" in r for r in results), results


async def _exposer_with(manager: McpManager, registry: ToolRegistry, settings: McpServerSettings) -> ProgressiveExposer:
    manager.start(settings)
    conn = manager.connection(settings.name)
    assert await reached(lambda: conn is not None and conn.state is ServerState.CONNECTED, within=30)
    return ProgressiveExposer(registry)


def _offered(exposer: ProgressiveExposer, registry: ToolRegistry, text: str) -> list[str]:
    return list(exposer.start_turn(text).for_round(registry.tool_names()).tools)


async def test_the_servers_keywords_names_and_descriptions_route(
    manager: McpManager, registry: ToolRegistry, stdio_settings: Callable[..., McpServerSettings]
) -> None:
    """Our SDK test server with the keywords 算术 / arithmetic: each kind of evidence exposes it; requests
    that do not ask for it leave it out, and the built-in routing of a request is unchanged by it."""
    exposer = await _exposer_with(manager, registry, stdio_settings(keywords=["算术", "arithmetic"]))
    asks = {
        "帮我做个算术：17 加 25": "keyword '算术'",
        "do some arithmetic for me: 17 plus 25": "keyword 'arithmetic'",
        "ask the test server to add 17 and 25": "named 'test server'",
        "用 test 服务器把 17 和 25 加起来": "named 'test 服务器'",
        "compute the env digest of HOME": "tool named 'env digest'",
        # a tool description (pixel: "A 1x1 PNG image."), where the engine routes no built-in tool
        "a 1x1 png image please": "tool 'pixel' matches the request",
    }
    for text, why in asks.items():
        assert "mcp_test" in _offered(exposer, registry, text), text
        assert why in exposer.start_turn(text).dynamic["mcp_test"], text
    for text in ["tell me a joke", "zip the logs folder", "what does SHA-256 mean?", "thanks!"]:
        offered = _offered(exposer, registry, text)
        assert "mcp_test" not in offered, text
        # what is offered is the engine's own route (after the always-on tools), nothing added
        assert offered == [*always_on(registry), *exposer.engine.route(text).tools], text
