"""``weclaw chat`` with a reasoning model: thinking shown dimmed apart from the answer, hidden on request, in --json
as reasoning_delta events; --reasoning-effort and --no-thinking set the profile's thinking controls.

What must survive: stdout holds only the answer (a script that captures it never gets the thinking); the thinking
goes to stderr, dimmed on a terminal; --hide-reasoning prints none of it; the effort and the off switch reach the
request in the profile's own fields, and a level the provider does not accept is refused before anything is sent.
"""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest
from agent_support import TEST_KEY, write_manifest
from provider_servers import RuleServer, turn_reply

from weclaw_desktop.agent import events as ev
from weclaw_desktop.commands.chat import TextPrinter
from weclaw_desktop.paths import app_paths
from weclaw_desktop.settings import Settings, SettingsStore

THOUGHT = "The user greets me; greet back."


async def chat(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from weclaw_desktop.cli import main

    code = await asyncio.to_thread(main, argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, weclaw_home: Path) -> Any:
    tools = write_manifest(tmp_path / "tools.json")
    monkeypatch.setenv("WECLAW_API_KEY", TEST_KEY)

    def argv(server: RuleServer, *extra: str, url: bool = True) -> list[str]:
        endpoint = ["--base-url", server.base_url, "--model", "m"] if url else []
        return ["chat", *extra, "--new", "--no-mcp", "--tools", str(tools), *endpoint]

    return argv


def _deepseek_settings(server: RuleServer, home: Path) -> None:
    s = Settings()
    s.provider.preset, s.provider.base_url, s.provider.model = "deepseek", server.base_url, "deepseek-flash"
    SettingsStore.open(app_paths(home).ensure()).save(s)


async def test_thinking_on_stderr_answer_alone_on_stdout(rule_server: Any, cli: Any, capsys: Any) -> None:
    server = await rule_server()
    server.push(turn_reply(reasoning=(THOUGHT,), text=("Hello!",)), turn_reply(reasoning=(THOUGHT,), text=("Hi.",)))
    code, out, err = await chat(cli(server, "hi"), capsys)
    assert code == 0 and out.strip() == "Hello!"
    assert THOUGHT in err and "\x1b[" not in err  # not a terminal: no colour codes
    code, out, err = await chat(cli(server, "hi", "--hide-reasoning"), capsys)
    assert code == 0 and out.strip() == "Hi." and THOUGHT not in err


async def test_json_has_reasoning_delta_events(rule_server: Any, cli: Any, capsys: Any) -> None:
    server = await rule_server()
    server.push(turn_reply(reasoning=("Think ", "twice."), text=("Done.",)))
    code, out, _ = await chat(cli(server, "hi", "--json"), capsys)
    events = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    assert [e["text"] for e in events if e["event"] == "reasoning_delta"] == ["Think ", "twice."]
    assert "".join(e["text"] for e in events if e["event"] == "text_delta") == "Done."
    message = next(e for e in events if e["event"] == "assistant_message")
    assert message["reasoning"] == "Think twice." and message["text"] == "Done."


async def test_effort_and_no_thinking_reach_the_request(
    rule_server: Any, cli: Any, capsys: Any, weclaw_home: Path
) -> None:
    server = await rule_server()
    _deepseek_settings(server, weclaw_home)
    server.push(turn_reply(text=("a",)), turn_reply(text=("b",)), turn_reply(text=("c",)))
    assert (await chat(cli(server, "x", "--reasoning-effort", "max", url=False), capsys))[0] == 0
    assert (await chat(cli(server, "x", "--no-thinking", url=False), capsys))[0] == 0
    assert (await chat(cli(server, "x", url=False), capsys))[0] == 0
    first, second, third = server.requests
    assert first["thinking"] == {"type": "enabled"} and first["reasoning_effort"] == "max"
    assert second["thinking"] == {"type": "disabled"} and "reasoning_effort" not in second
    assert "thinking" not in third and "reasoning_effort" not in third  # the endpoint's default


async def test_a_level_the_provider_does_not_accept_is_refused(
    rule_server: Any, cli: Any, capsys: Any, weclaw_home: Path
) -> None:
    server = await rule_server()
    _deepseek_settings(server, weclaw_home)
    code, _, err = await chat(cli(server, "x", "--reasoning-effort", "medium", url=False), capsys)
    assert code == 2 and "accepts the thinking efforts low, high, max, not 'medium'" in err
    assert server.requests == []


def test_thinking_is_dimmed_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out, err = Tty(), Tty()
    printer = TextPrinter(out, err)
    printer.event(ev.ReasoningDelta(run_id="r", session_id="s", text="hmm"))
    printer.event(ev.TextDelta(run_id="r", session_id="s", text="Answer"))
    printer.finish()
    assert err.getvalue() == "\x1b[2mhmm\x1b[0m\n\n" and out.getvalue() == "Answer\n"
