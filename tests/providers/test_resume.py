"""A resumed session still sends DeepSeek a valid history: after SIGKILL mid-turn and after a restart; and trimming
old context never strips the reasoning a kept tool-call turn needs.

What must survive: the reasoning of each assistant message is in the database (migration component history.reasoning) before the
tool calls run, so a process killed in the middle of a tool call leaves a history that a new process can send to a
DeepSeek-rule server without its 400; a database created before those columns opens, keeps its messages and gains the
columns; max_context_chars drops whole old user turns only, and what is kept still passes the rule.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from agent_support import TEST_KEY, chat_cmd, child_env, run_turn, write_manifest
from provider_servers import Call, deepseek_rule, turn_reply

from weclaw_desktop.agent.history import HistoryStore, build_model_messages
from weclaw_desktop.agent.provider.messages import outbound
from weclaw_desktop.agent.provider.profiles import get_profile
from weclaw_desktop.paths import app_paths
from weclaw_desktop.settings import Settings, SettingsStore
from weclaw_desktop.storage.db import Database

R1 = "I need the slow tool; it may take a while. "


@pytest.mark.skipif(sys.platform == "win32", reason="uses POSIX signals")
async def test_sigkill_mid_tool_call_then_resume_on_deepseek(rule_server: Any, tmp_path: Path) -> None:
    server = await rule_server(deepseek_rule)
    server.push(
        turn_reply(reasoning=(R1,), calls=(Call("echo_say", {"text": "one"}), Call("faulty_sleep", {"seconds": 30}))),
        turn_reply(reasoning=("The sleep was cut off. ",), text=("The slow step did not finish.",)),
    )
    home = tmp_path / "home"
    paths = app_paths(home).ensure()
    settings = Settings()
    settings.provider.preset = "deepseek"
    settings.provider.base_url = server.base_url
    settings.provider.model = "deepseek-flash"
    settings.agent.exposure = "all"
    SettingsStore.open(paths).save(settings)
    tools = write_manifest(tmp_path / "tools.json")
    env = child_env(home, WECLAW_API_KEY=TEST_KEY)
    proc = await asyncio.create_subprocess_exec(
        *chat_cmd("two steps", "--new", "--json", "--yes", "--no-mcp", "--tools", str(tools)),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    session = ""
    reasoning_events = 0
    while True:
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        assert line, "the chat process ended early"
        event = json.loads(line)
        session = event["session_id"]
        reasoning_events += event["event"] == "reasoning_delta"
        if event["event"] == "tool_call_started" and event["function"] == "faulty_sleep":
            break
    proc.send_signal(signal.SIGKILL)
    await proc.wait()
    assert reasoning_events == 1

    conn = sqlite3.connect(paths.database)
    rows = conn.execute("SELECT role, reasoning, meta FROM messages WHERE role='assistant'").fetchall()
    conn.close()
    assert rows[0][1] == R1 and json.loads(rows[0][2])["reasoning_field"] == "reasoning_content"

    # a new process continues the killed session
    code_out = await asyncio.create_subprocess_exec(
        *chat_cmd("what happened?", "--session", session, "--json", "--yes", "--no-mcp", "--tools", str(tools)),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL,
    )
    out, err = await asyncio.wait_for(code_out.communicate(), 60)
    assert code_out.returncode == 0, err.decode()
    assert server.rejections == []
    sent = server.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert sent[2]["reasoning_content"] == R1 and "did not finish" in sent[4]["content"]
    done = [json.loads(x) for x in out.decode().splitlines() if '"turn_done"' in x]
    assert done[-1]["reason"] == "completed"


async def test_restart_then_continue_in_a_new_runtime(rule_server: Any, runtime_on: Any) -> None:
    server = await rule_server(deepseek_rule)
    server.push(
        turn_reply(reasoning=(R1,), calls=(Call("echo_say", {"text": "x"}),)),
        turn_reply(reasoning=("done ",), text=("ok",)),
        turn_reply(text=("still fine",)),
    )
    rt = await runtime_on(server, "deepseek")
    done, _, sid = await run_turn(rt, "echo x")
    assert done.reason == "completed"
    await rt.close()
    rt2 = await runtime_on(server, "deepseek")  # the same data folder, a new process's worth of state
    done2, _, _ = await run_turn(rt2, "again", sid)
    assert server.rejections == [] and done2.reason == "completed", done2.message
    assert [m.get("reasoning_content") for m in server.requests[-1]["messages"] if m["role"] == "assistant"] == [
        R1,
        "done ",
    ]


async def test_old_database_gains_reasoning_columns(weclaw_home: Path) -> None:
    """A weclaw.db from before the reasoning columns (history version 1 only) opens with its messages intact."""
    path = weclaw_home / "old.db"
    conn = sqlite3.connect(path)
    from weclaw_desktop.agent import history as history_mod
    from weclaw_desktop.storage import db as db_mod

    v1 = db_mod._MIGRATIONS[history_mod.COMPONENT][0].sql
    conn.executescript(v1)
    conn.execute("CREATE TABLE schema_version (component TEXT PRIMARY KEY, version INTEGER NOT NULL)")
    conn.execute("INSERT INTO schema_version VALUES ('history', 1)")
    conn.execute("INSERT INTO sessions VALUES ('s1', 't', 1, 1, '', '')")
    conn.execute(
        "INSERT INTO messages(session_id, role, content, tool_calls, created_at) VALUES "
        "('s1', 'assistant', 'old answer', NULL, 1)"
    )
    conn.commit()
    conn.close()
    store = HistoryStore(Database.open(path))
    [m] = await store.messages("s1")
    assert (m.content, m.reasoning, m.meta) == ("old answer", "", {})
    await store.add_assistant("s1", "r", 1, "new", [], reasoning="thought", meta={"reasoning_ms": 5})
    assert [(m.reasoning, m.reasoning_ms) for m in await store.messages("s1")] == [("", 0), ("thought", 5)]
    store.db.close()


def test_trimming_keeps_whole_turns_with_their_reasoning() -> None:
    from weclaw_desktop.agent.history import StoredMessage

    stored: list[StoredMessage] = []
    n = 0
    for turn in range(6):
        n += 1
        stored.append(StoredMessage(n, "user", f"question {turn} " + "x" * 300))
        n += 1
        call = {"id": f"c{turn}", "type": "function", "function": {"name": "echo_say", "arguments": "{}"}}
        stored.append(
            StoredMessage(
                n,
                "assistant",
                "",
                tool_calls=[call],
                reasoning=f"why {turn} " * 40,
                meta={"reasoning_field": "reasoning_content", "source": "deepseek@h"},
            )
        )
        n += 1
        stored.append(StoredMessage(n, "tool", "result", tool_call_id=f"c{turn}"))
        n += 1
        stored.append(StoredMessage(n, "assistant", f"answer {turn}", reasoning="short", meta={"source": "deepseek@h"}))
    trimmed = build_model_messages(stored, max_chars=2500)
    assert trimmed[0]["role"] == "user" and 0 < len(trimmed) < len(stored)
    sent = outbound(trimmed, get_profile("deepseek"), source="deepseek@h")
    assert deepseek_rule(None, {"messages": sent}) is None  # type: ignore[arg-type]
    kept = [m for m in sent if m["role"] == "assistant" and m.get("tool_calls")]
    assert kept and all(m["reasoning_content"].startswith("why ") for m in kept)
