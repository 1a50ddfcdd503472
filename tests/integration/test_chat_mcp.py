"""``weclaw chat`` starts the MCP servers of the settings before the turn and stops them after it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fakeopenai import FakeOpenAI, call, text_reply, tool_reply
from integration_helpers import TEST_KEY, live_children, mcp_settings

from weclaw_desktop.mcp import tool_name
from weclaw_desktop.settings import Settings, SettingsStore

MCP_TOOL = tool_name("test")


async def test_chat_command_uses_mcp_servers_from_settings(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from weclaw_desktop.cli import main

    settings = Settings()
    settings.mcp_servers = [mcp_settings("test")]
    SettingsStore.open().save(settings)
    monkeypatch.setenv("WECLAW_API_KEY", TEST_KEY)
    fake_openai.push(tool_reply(call(f"{MCP_TOOL}_add", {"a": 19, "b": 23})), text_reply("It is 42."))
    argv = ["chat", "--new", "--yes", "--exposure", "all", "--base-url", fake_openai.base_url, "--model", "fake-model"]
    before = live_children()
    code = await asyncio.to_thread(main, [*argv, "19 + 23?"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "It is 42." in out
    assert f"{MCP_TOOL}_add" in fake_openai.tool_names(0)
    tool_messages = [m for m in fake_openai.messages(-1) if m["role"] == "tool"]
    assert len(tool_messages) == 1 and "42" in tool_messages[0]["content"]
    assert live_children() - before == set()  # the server was stopped with the command

    # --no-mcp: the model is not offered the server's tools
    fake_openai.push(text_reply("ok"))
    assert await asyncio.to_thread(main, [*argv, "--no-mcp", "hi"]) == 0
    assert not any(name.startswith(MCP_TOOL) for name in fake_openai.tool_names(-1))
