"""One writer per session: two ``weclaw chat`` processes never interleave one conversation.

Cases (real processes): while a turn with 24 tool calls runs in one process, a second process asking
for that session by id gets a clear message (exit 2), and one continuing "the latest" gets a new
session with a note; the first process's 24 completed calls all reach the next turn as completed (not
"did not finish"), and the second process's start-up recovery leaves the running turn alone. Separate
sessions in two processes at once still work without lock errors. In one process: deleting a session
whose turn runs elsewhere is refused.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from chaos_support import AnsweringFakeOpenAI, Chat, assert_clean_stderr, chat_env, rows, run_chat
from fakeopenai import Reply, call, text_reply, tool_reply

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell commands")

CALLS = 24


def _decide(body: dict[str, Any]) -> Reply:
    """The fake model: 'run 24' -> 24 shell calls that wait for a go file; after tool results -> text."""
    messages = body["messages"]
    last = messages[-1]
    if last["role"] == "tool":
        return text_reply(f"all {sum(1 for m in messages if m['role'] == 'tool')} results seen")
    text = str(last.get("content") or "")
    if text.startswith("run 24 in "):
        folder = text.removeprefix("run 24 in ")
        wait = f"while [ ! -e {folder}/go ]; do sleep 0.05; done"
        return tool_reply(
            *[call("shell_run", {"command": f"{wait}; echo result-{i}"}, id=f"p{i}") for i in range(CALLS)]
        )
    if text.startswith("shell "):
        return tool_reply(call("shell_run", {"command": text.removeprefix("shell ")}, id="s1"))
    return text_reply(f"answer to {text[:20]}")


@pytest.fixture
async def fake() -> AnsweringFakeOpenAI:
    server = AnsweringFakeOpenAI(_decide)
    await server.start()
    yield server  # type: ignore[misc]
    await server.stop()


async def test_a_second_process_on_a_busy_session_is_turned_away(fake, tmp_path: Path) -> None:
    """What must survive: the first process's 24 calls, as completed, in the conversation the next turn
    sends; what the second process's user sees: a clear message, or a new session with a note."""
    home, work = tmp_path / "data", tmp_path / "work"
    work.mkdir()
    env = chat_env(home, tmp_path)
    first = await Chat.start(fake, env, f"run 24 in {work}", "--new")
    session = (await first.until("tool_call_started", call_id="p0"))["session_id"]

    code, out, err = await run_chat(fake, env, "interfere", "--session", session)
    assert code == 2 and out == ""
    assert_clean_stderr(err)
    assert err.strip().splitlines()[-1] == (
        f"error: conversation {session} is answering in another WeClaw process; wait until it finishes, "
        "or start a new one with --new"
    )
    code, out, err = await run_chat(fake, env, "continue the latest")
    assert code == 0, err
    assert f"[conversation {session} is answering in another WeClaw process; starting a new one]" in err
    assert out.strip() == "answer to continue the latest"

    (work / "go").touch()
    code, _out, err = await first.finish(120)
    assert code == 0, err
    statuses = rows(home, "SELECT status, count(*) FROM tool_calls WHERE session_id=? GROUP BY status", (session,))
    assert statuses == [("success", CALLS)]
    assert rows(home, "SELECT status FROM turns WHERE session_id=?", (session,)) == [("completed",)]

    code, out, err = await run_chat(fake, env, "what did you get?", "--session", session)
    assert code == 0, err
    sent = fake.messages()
    results = {m["tool_call_id"]: m["content"] for m in sent if m["role"] == "tool"}
    assert len(results) == CALLS and not [r for r in results.values() if "did not finish" in r]
    assert all(f"result-{i}" in results[f"p{i}"] for i in range(CALLS))
    users = [m["content"] for m in sent if m["role"] == "user"]
    assert users == [f"run 24 in {work}", "what did you get?"]  # nothing of the other process


async def test_separate_sessions_in_two_processes_at_once(fake, tmp_path: Path) -> None:
    """What held must keep holding: two processes, each its own session, writing at the same time."""
    home, work = tmp_path / "data", tmp_path / "work"
    work.mkdir()
    env = chat_env(home, tmp_path)
    jobs = [
        run_chat(
            fake, env, f"shell for i in 1 2 3 4 5; do echo {n}-$i >> {work}/{n}.txt; done; cat {work}/{n}.txt", "--new"
        )
        for n in ("a", "b")
    ]
    results = await asyncio.gather(*jobs)
    for code, out, err in results:
        assert code == 0, err
        assert_clean_stderr(err)
        assert "locked" not in err and "busy" not in err
        assert out.strip().endswith("all 1 results seen")
    assert rows(home, "SELECT count(*) FROM sessions") == [(2,)]
    assert rows(home, "SELECT status, count(*) FROM tool_calls GROUP BY status") == [("success", 2)]


async def test_delete_and_recovery_respect_a_session_running_elsewhere(tmp_path: Path, fake_openai) -> None:
    """Deleting a conversation whose turn runs in another runtime is refused (SessionBusy); recovery in
    that other runtime does not mark the running turn interrupted."""
    from fakeopenai import hang_reply

    from weclaw_desktop.agent.history import SessionBusy
    from weclaw_desktop.agent.runtime import AgentRuntime
    from weclaw_desktop.settings import Settings
    from weclaw_desktop.toolkit.base import Origin

    settings = Settings()
    settings.provider.base_url, settings.provider.model, settings.provider.preset = fake_openai.base_url, "m", "custom"
    a = AgentRuntime.create(settings, api_key="sk-test", origin=Origin.CLI, logs=False)
    b = AgentRuntime.create(settings, api_key="sk-test", origin=Origin.CLI, logs=False)
    try:
        session = await a.create_session()
        fake_openai.push(hang_reply("thinking"))
        handle = a.start_turn(session.id, "hi")
        await asyncio.wait_for(fake_openai.hanging.wait(), 20)
        assert await b.recover() == 0
        assert await b.history.turn_status(handle.run_id) == "running"
        with pytest.raises(SessionBusy):
            await b.delete_session(session.id)
        done = await b.start_turn(session.id, "me too").wait()
        assert done.reason == "error" and "answering in another WeClaw" in done.message
        handle.cancel()
        assert (await handle.wait()).reason == "cancelled"
        assert await b.delete_session(session.id)
    finally:
        await a.close()
        await b.close()
