"""What held before the crash-only work must keep holding with running rows and session locks in place.

50 parallel calls in one round (every call recorded running in one transaction with its message, every
row closed, every audit row begun and finished); a stream dropped in the round after a tool call (the
tool ran once; the next turn does not run it again and sees its result).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from fakeopenai import call, drop_reply, text_reply, tool_reply

from weclaw_desktop.agent.runtime import AgentRuntime
from weclaw_desktop.settings import Settings
from weclaw_desktop.toolkit.approval import AutoApprove
from weclaw_desktop.toolkit.base import Origin


def _runtime(fake) -> AgentRuntime:  # type: ignore[no-untyped-def]
    settings = Settings()
    settings.provider.base_url, settings.provider.model, settings.provider.preset = fake.base_url, "m", "custom"
    settings.provider.max_retries = 0
    settings.agent.exposure = "all"
    return AgentRuntime.create(settings, api_key="sk-test", origin=Origin.CLI, gate=AutoApprove(), logs=False)


async def test_fifty_parallel_calls_are_each_recorded_once(fake_openai) -> None:
    rt = _runtime(fake_openai)
    try:
        fake_openai.push(
            tool_reply(*[call("calculator_evaluate", {"expression": f"{i} * 2"}, id=f"c{i}") for i in range(50)]),
            text_reply("done"),
        )
        session = await rt.create_session()
        done = await rt.start_turn(session.id, "fifty sums").wait()
        assert done.reason == "completed", done.message
        calls = await rt.tool_calls(session.id)
        assert len(calls) == 50 and {c.status for c in calls} == {"success"}
        assert sorted(c.call_id for c in calls) == sorted(f"c{i}" for i in range(50))
        audit = await rt.audit.records(session_id=session.id)
        assert len(audit) == 50 and {a.status for a in audit} == {"success"}
        results = [m for m in fake_openai.messages() if m["role"] == "tool"]
        assert len(results) == 50
    finally:
        await rt.close()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell command")
async def test_a_dropped_stream_after_a_tool_call_never_runs_it_twice(fake_openai, tmp_path: Path, home: Path) -> None:
    rt = _runtime(fake_openai)
    log = home / "ran.log"
    try:
        fake_openai.push(
            tool_reply(call("shell_run", {"command": f"echo once >> {log}"}, id="s1")),
            drop_reply("Half an ans"),
        )
        session = await rt.create_session()
        done = await rt.start_turn(session.id, "append a line").wait()
        assert done.reason == "error"
        assert log.read_text() == "once\n"

        fake_openai.push(text_reply("The line was added once."))
        done = await rt.start_turn(session.id, "did it work?").wait()
        assert done.reason == "completed"
        assert log.read_text() == "once\n"
        assert [(c.call_id, c.status) for c in await rt.tool_calls(session.id)] == [("s1", "success")]
        sent = fake_openai.messages()
        assert [m["tool_call_id"] for m in sent if m["role"] == "tool"] == ["s1"]
    finally:
        await rt.close()
