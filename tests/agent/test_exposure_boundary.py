"""Exposure is a capability boundary (#13): a model that names a function it was not offered in the round
gets a refusal and nothing runs, whatever the approval settings.

These run the real loop against the fake OpenAI server with the real tools.json and progressive routing,
and an approval gate that says yes to everything: only the boundary stands between the model and the tool.
The model is the attacker here (it obeys an instruction hidden in a web page, say); what must survive is
that no un-offered tool runs, and that the legitimate way (tool_search, then the next round) still works.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

from agent_support import make_settings, of, run_turn
from fakeopenai import FakeOpenAI, call, text_reply, tool_reply

from weclaw_desktop.paths import tools_json_path
from weclaw_desktop.toolkit.approval import AutoApprove
from weclaw_desktop.toolkit.dispatcher import Dispatcher
from weclaw_desktop.toolkit.outcome import DecidedBy, ErrorKind


async def progressive_runtime(make_runtime: Any, fake_openai: FakeOpenAI, **agent: Any) -> Any:
    settings = make_settings(fake_openai, exposure="progressive", **agent)
    settings.agent.approvals.rules["cli"] = {"low": "allow", "medium": "allow", "high": "ask"}
    return await make_runtime(settings, tools_json=Path(tools_json_path()), gate=AutoApprove())


def shell(marker: Path) -> dict[str, str]:
    return {"command": f"echo pwned > {marker.name}", "cwd": str(marker.parent)}


async def test_an_un_offered_function_is_refused_and_does_not_run(
    make_runtime: Any, fake_openai: FakeOpenAI, home: Path
) -> None:
    """The request is about the time; the model names shell_run (not offered): refused, no process runs."""
    rt = await progressive_runtime(make_runtime, fake_openai)
    marker = home / "pwned.txt"
    fake_openai.push(tool_reply(call("shell_run", shell(marker), id="evil")), text_reply("ok"))
    _done, events, sid = await run_turn(rt, "what time is it in Tokyo")

    assert "shell_run" not in fake_openai.tool_names(0)  # it really was not offered
    assert not marker.exists()
    assert not of(events, "tool_call_started") and not of(events, "tool_call_awaiting_approval")
    denied = of(events, "tool_call_denied")[0]
    assert (denied.call_id, denied.decided_by, denied.error_kind) == ("evil", DecidedBy.EXPOSURE, ErrorKind.NOT_OFFERED)
    fin = of(events, "tool_call_finished")[0]
    assert (fin.status, fin.error_kind) == ("denied", ErrorKind.NOT_OFFERED)
    # the model is told the function exists and how to get it legitimately
    tool_msg = next(m for m in fake_openai.messages(1) if m["role"] == "tool")
    assert "shell_run exists but was not offered in this step" in tool_msg["content"]
    assert "tool_search_find" in tool_msg["content"]
    (row,) = await rt.audit.records(session_id=sid)
    assert (row.function, row.status, row.error_kind, row.decided_by) == (
        "shell_run",
        "denied",
        "not-offered",
        "exposure",
    )


async def test_after_a_refusal_the_next_round_still_does_not_offer_it(
    make_runtime: Any, fake_openai: FakeOpenAI, home: Path
) -> None:
    """Insisting does not widen the exposure: the refused tool is not offered next round and is refused again."""
    rt = await progressive_runtime(make_runtime, fake_openai)
    marker = home / "pwned.txt"
    fake_openai.push(
        tool_reply(call("shell_run", shell(marker), id="a")),
        tool_reply(call("shell_run", {**shell(marker), "timeout_s": 5}, id="b")),
        text_reply("gave up"),
    )
    _done, events, _ = await run_turn(rt, "what time is it in Tokyo")
    assert "shell_run" not in fake_openai.tool_names(1)
    assert [e.error_kind for e in of(events, "tool_call_finished")] == [ErrorKind.NOT_OFFERED] * 2
    assert not marker.exists() and not of(events, "tool_call_started")


async def test_in_a_parallel_batch_only_the_offered_call_runs(
    make_runtime: Any, fake_openai: FakeOpenAI, home: Path
) -> None:
    rt = await progressive_runtime(make_runtime, fake_openai)
    marker = home / "pwned.txt"
    fake_openai.push(
        tool_reply(
            call("datetime_now", {}, id="ok"),
            call("shell_run", shell(marker), id="evil"),
            call("file_write", {"path": str(home / "x.txt"), "content": "x"}, id="evil2"),
        ),
        text_reply("done"),
    )
    _done, events, _ = await run_turn(rt, "what time is it in Tokyo")
    statuses = {e.call_id: (e.status, e.error_kind) for e in of(events, "tool_call_finished")}
    assert statuses == {
        "ok": ("success", None),
        "evil": ("denied", ErrorKind.NOT_OFFERED),
        "evil2": ("denied", ErrorKind.NOT_OFFERED),
    }
    assert [e.call_id for e in of(events, "tool_call_started")] == ["ok"]
    assert not marker.exists() and not (home / "x.txt").exists()


async def test_what_tool_search_finds_is_offered_and_runs_from_the_next_round(
    make_runtime: Any, fake_openai: FakeOpenAI, home: Path
) -> None:
    """The legitimate path through the boundary: find the tool, then call it in the next round."""
    rt = await progressive_runtime(make_runtime, fake_openai)
    marker = home / "found.txt"
    fake_openai.push(
        tool_reply(call("tool_search_find", {"query": "run a shell command"}, id="find")),
        tool_reply(call("shell_run", shell(marker), id="run")),
        text_reply("done"),
    )
    _done, events, _ = await run_turn(rt, "what time is it in Tokyo")
    assert "shell_run" not in fake_openai.tool_names(0) and "shell_run" in fake_openai.tool_names(1)
    statuses = {e.call_id: e.status for e in of(events, "tool_call_finished")}
    assert statuses == {"find": "success", "run": "success"}
    assert marker.exists()  # (its encoding differs by shell: PowerShell 5 writes UTF-16)


async def test_a_switched_off_tool_is_refused_even_when_everything_is_exposed(
    make_runtime: Any, fake_openai: FakeOpenAI, home: Path
) -> None:
    """Mode "all" offers every visible tool; a tool the user switched off is hidden, so naming it is refused
    with the reason (disabled), and tool_search does not bring it back."""
    settings = make_settings(fake_openai)  # exposure "all"
    settings.tools.policy = settings.tools.policy.with_switch("shell", False)
    rt = await make_runtime(settings, tools_json=Path(tools_json_path()), gate=AutoApprove())
    marker = home / "pwned.txt"
    fake_openai.push(
        tool_reply(call("tool_search_find", {"query": "run a shell command"}, id="find")),
        tool_reply(call("shell_run", shell(marker), id="evil")),
        text_reply("done"),
    )
    _done, events, _ = await run_turn(rt, "hello")
    assert not any(n.startswith("shell_") for r in range(2) for n in fake_openai.tool_names(r))
    found = json.loads(next(m for m in fake_openai.messages(1) if m["role"] == "tool")["content"].split("data: ")[1])
    assert "shell" not in found["tools"]
    fin = {e.call_id: e for e in of(events, "tool_call_finished")}["evil"]
    assert (fin.status, fin.error_kind, fin.decided_by) == ("denied", ErrorKind.DISABLED, DecidedBy.POLICY)
    assert "switched off by you" in fin.output and not marker.exists()


async def test_a_hidden_function_is_refused_with_its_diagnostic(make_runtime: Any, fake_openai: FakeOpenAI) -> None:
    """clipboard_read needs the clipboard bridge, which a headless runtime lacks: refused as unavailable."""
    rt = await make_runtime(make_settings(fake_openai), tools_json=Path(tools_json_path()), gate=AutoApprove())
    fake_openai.push(tool_reply(call("clipboard_read", {}, id="c")), text_reply("done"))
    _done, events, _ = await run_turn(rt, "hello")
    assert "clipboard_read" not in fake_openai.tool_names(0)
    fin = of(events, "tool_call_finished")[0]
    assert (fin.status, fin.error_kind) == ("error", ErrorKind.UNAVAILABLE) and "[bridge-missing]" in fin.output
    assert not of(events, "tool_call_started")


def test_direct_callers_must_say_there_is_no_round() -> None:
    """``offered`` and ``gate`` have no defaults: a caller cannot open every function by forgetting them."""
    params = inspect.signature(Dispatcher.dispatch).parameters
    assert params["offered"].default is inspect.Parameter.empty
    assert params["gate"].default is inspect.Parameter.empty
    assert params["offered"].kind is inspect.Parameter.KEYWORD_ONLY
