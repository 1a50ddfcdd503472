"""The 128-function cap tells the model what it left out, and tool_search brings a left-out tool back.

A real stdio MCP server with 150 tools next to the built-in tools, through ``weclaw chat`` and the fake
OpenAI server. What must hold: the request carries a line naming the server and how many of its functions
were left out, with tool_search as the way to them; the line is the same in every round of the turn; a
tool_search for a left-out tool makes exactly that function callable in the next round, where the model's
call reaches the server.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from fakeopenai import FakeOpenAI, call, text_reply, tool_reply

from weclaw_desktop.cli import main
from weclaw_desktop.settings import McpServerSettings, Settings, SettingsStore

HERE = Path(__file__).resolve().parent
LAST = "mcp_big_op_149"  # the temperature conversion, last in the server's order


async def _turn(
    fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, capsys: Any, mode: str, text: str, tools: int = 150
) -> str:
    SettingsStore.open().save(
        Settings(
            mcp_servers=[
                McpServerSettings(
                    name="big",
                    command=sys.executable,
                    args=[str(HERE / "many_tools_server.py")],
                    env={"WECLAW_TEST_TOOLS": str(tools)},
                )
            ]
        )
    )
    monkeypatch.setenv("WECLAW_API_KEY", "sk-cap-test")
    argv = ["chat", "--new", "--yes", "--exposure", mode, "--base-url", fake.base_url, "--model", "fake-model", text]
    code = await asyncio.to_thread(main, argv)
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    return str(out.out)


def _system(fake: FakeOpenAI, request: int) -> str:
    return str(fake.messages(request)[0]["content"])


@pytest.mark.parametrize("mode", ["all", "progressive"])
async def test_the_cap_is_told_to_the_model_and_tool_search_brings_a_tool_back(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, capsys: Any, mode: str
) -> None:
    """Mode "all": the server is offered in part from the first round, and the first request says so.
    Mode "progressive": the server comes in through tool_search (found), over the cap, and the found
    function is among the ones offered; the line appears then and stays."""
    fake_openai.push(
        tool_reply(call("tool_search_find", {"query": "convert a temperature to kelvin"}, id="s1")),
        tool_reply(call(LAST, {"celsius": 27}, id="c1")),
        text_reply("27 °C is 300.15 K."),
    )
    out = await _turn(fake_openai, monkeypatch, capsys, mode, "how much is 27 degrees celsius in kelvin?")
    assert "300.15 K" in out
    first, second, third = (fake_openai.tool_names(i) for i in range(3))
    assert len(first) <= 128 and len(second) <= 128 and len(third) <= 128
    assert LAST not in first
    assert LAST in second, "tool_search did not bring the left-out function back"
    # what the server's search result told the model
    found = [m for m in fake_openai.messages(1) if m["role"] == "tool"]
    assert LAST in str(found[0]["content"])
    # the call reached the server and its answer the model
    results = [str(m["content"]) for m in fake_openai.messages(2) if m["role"] == "tool"]
    assert any("300.15 K" in r for r in results), results
    if mode == "all":
        note = _system(fake_openai, 0)
        assert "Tools left out of this request (the limit is 128 functions)" in note
        left_out = 150 - sum(f.startswith("mcp_big_") for f in first)
        assert f"{left_out} functions of MCP server big" in note
        assert "tool_search_find" in note
    else:
        assert "left out" not in _system(fake_openai, 0)  # nothing was capped in the first round
        note = _system(fake_openai, 1)
        assert "functions of MCP server big" in note
    assert _system(fake_openai, 2) == note, "the line changed within the turn"


async def test_a_whole_turn_under_the_cap_has_no_line(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """Nothing left out: no line (the system message is the usual one)."""
    fake_openai.push(text_reply("Hello."))
    await _turn(fake_openai, monkeypatch, capsys, "all", "hello", tools=5)
    assert "left out" not in _system(fake_openai, 0)
    assert any(f.startswith("mcp_big_") for f in fake_openai.tool_names(0))
