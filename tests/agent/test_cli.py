"""``weclaw chat`` and ``weclaw doctor`` as real processes against the fake server.

Covers: one turn printed with a line per tool call, --json events, exit codes with a one-line reason,
history resumed in a new process, a process SIGKILLed mid-turn and restarted, and API keys absent from
the database, the logs and the environment of child processes.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import sys
from pathlib import Path

import pytest
from agent_support import TEST_KEY, chat_cmd, child_env, write_manifest
from fakeopenai import FakeOpenAI, call, error_reply, text_reply, tool_reply

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="uses POSIX signals")


async def run_cli(args: list[str], env: dict[str, str], limit_s: float = 60) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *args, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, stdin=asyncio.subprocess.DEVNULL
    )
    out, err = await asyncio.wait_for(proc.communicate(), limit_s)
    return proc.returncode or 0, out.decode(), err.decode()


async def run_inproc(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``weclaw ...`` in this process (on a worker thread with its own event loop): much faster to start."""
    from weclaw_desktop.cli import main

    code = await asyncio.to_thread(main, argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def db_rows(home: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(home / "data" / "weclaw.db")
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


@pytest.fixture
def cli(tmp_path: Path, fake_openai: FakeOpenAI):
    """(home, args): a data dir and ``python -m weclaw_desktop chat ...`` arguments for it."""
    home = tmp_path / "home"
    tools = write_manifest(tmp_path / "tools.json")

    def args(*extra: str) -> list[str]:
        # --exposure all: the test manifest has no intents; these tests are about the CLI, not routing
        return chat_cmd(
            *extra,
            "--base-url",
            fake_openai.base_url,
            "--model",
            "fake-model",
            "--tools",
            str(tools),
            "--exposure",
            "all",
        )

    return home, args


@pytest.fixture
def chat(tmp_path: Path, fake_openai: FakeOpenAI, weclaw_home: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    """Run ``weclaw chat ...`` in-process; returns (code, stdout, stderr). The key comes from the env."""
    tools = write_manifest(tmp_path / "tools.json")

    async def run(*extra: str, endpoint: bool = True) -> tuple[int, str, str]:
        monkeypatch.setenv("WECLAW_API_KEY", TEST_KEY)
        argv = ["chat", *extra, "--tools", str(tools), "--exposure", "all"]  # no intents in the test manifest
        if endpoint:
            argv += ["--base-url", fake_openai.base_url, "--model", "fake-model"]
        return await run_inproc(argv, capsys)

    return run


async def test_one_message_in_a_real_process_and_no_key_anywhere(fake_openai: FakeOpenAI, cli) -> None:
    home, args = cli
    fake_openai.push(
        tool_reply(call("echo_say", {"text": "ping"}, split=3), call("proc_env", {})),
        text_reply("Pong", " received."),
    )
    code, out, err = await run_cli(args("echo ping", "--new", "--yes"), child_env(home, WECLAW_API_KEY=TEST_KEY))

    assert code == 0, err
    lines = out.splitlines()
    assert lines[:2] == ['  → echo_say {"text": "ping"}', "  → proc_env {}"]
    assert sorted(line.split()[:2] for line in lines[2:4]) == [["✓", "echo_say"], ["✓", "proc_env"]]
    assert any(line.startswith("  ✓ echo_say success") and line.endswith("ping") for line in lines)
    assert lines[-1] == "Pong received."
    assert err.startswith("[session ")
    assert fake_openai.headers[0]["Authorization"] == f"Bearer {TEST_KEY}"  # the key was used

    # ... and is nowhere else: not in the child's environment, the database (and WAL), or the logs
    child = json.loads((home / "data" / "outputs" / "child-env.json").read_text())
    assert "WECLAW_HOME" in child  # it is the real child environment
    assert not [k for k, v in child.items() if TEST_KEY in v or k in ("WECLAW_API_KEY", "OPENAI_API_KEY")]
    files = [p for p in home.rglob("*") if p.is_file()]
    assert {"weclaw.db", "weclaw.log"} <= {p.name for p in files}
    assert [p for p in files if TEST_KEY.encode() in p.read_bytes()] == []


async def test_json_events_and_sessions(fake_openai: FakeOpenAI, chat) -> None:
    fake_openai.push(text_reply("My name is Claw."))
    code, out, _ = await chat("what is your name?", "--json", "--new")
    assert code == 0
    events = [json.loads(line) for line in out.splitlines()]
    names = ["round_started", "text_delta", "usage_reported", "assistant_message", "turn_done"]
    assert [e["event"] for e in events] == names
    usage = events[2]
    assert usage["estimated"] is True and usage["completion_tokens"] > 0  # the fake sends no usage: estimated
    session = events[-1]["session_id"]
    assert events[-1]["reason"] == "completed" and events[-1]["text"] == "My name is Claw."

    fake_openai.push(text_reply("You asked my name."))
    code, out, _ = await chat("what did I ask?", "--session", session)
    assert code == 0 and out.strip() == "You asked my name."
    sent = fake_openai.messages()
    assert [(m["role"], m["content"]) for m in sent[1:]] == [
        ("user", "what is your name?"),
        ("assistant", "My name is Claw."),
        ("user", "what did I ask?"),
    ]
    # without --session or --new the latest conversation continues
    fake_openai.push(text_reply("third"))
    code, _, _ = await chat("and now?")
    assert code == 0 and len(fake_openai.messages()) == 6


async def test_failures_exit_non_zero_with_one_line(fake_openai: FakeOpenAI, chat) -> None:
    fake_openai.push(error_reply(401, "Incorrect API key provided: sk-test-4f9a***"))
    code, _out, err = await chat("hi", "--new")
    assert code == 1
    assert err.splitlines()[-1] == "error: The endpoint rejected the API key (401). Check the key in Settings."

    code, _out, err = await chat("hi", "--session", "nope")
    assert code == 2 and err.strip() == "error: no conversation with id nope (list them in the app)"

    code, _out, err = await chat("hi", endpoint=False)
    assert code == 2 and "no model endpoint is set up" in err

    code, _out, err = await chat("hi", "--api-key-env", "WECLAW_MISSING_KEY")
    assert code == 2 and err.strip() == "error: the environment variable WECLAW_MISSING_KEY is not set"


async def test_max_rounds_option_and_exit_code(fake_openai: FakeOpenAI, chat) -> None:
    fake_openai.push(tool_reply(call("echo_say", {"text": "a"})))
    code, _out, err = await chat("loop", "--new", "--max-rounds", "1")
    assert code == 3 and "Stopped after 1 rounds" in err.splitlines()[-1]


async def test_deny_risky_and_yes(fake_openai: FakeOpenAI, chat, weclaw_home: Path) -> None:
    fake_openai.push(tool_reply(call("echo_shout", {"text": "hey"})), text_reply("denied"))
    code, out, _ = await chat("shout", "--new", "--deny-risky")
    assert code == 0 and "✗ echo_shout denied" in out
    fake_openai.push(tool_reply(call("echo_shout", {"text": "hey"})), text_reply("shouted"))
    code, out, _ = await chat("shout", "--new", "--yes")
    assert code == 0 and "✓ echo_shout success" in out and "HEY" in out
    rows = db_rows(weclaw_home, "SELECT function, status, approval, decided_by FROM audit ORDER BY id")
    assert rows == [("echo_shout", "denied", "deny", "policy"), ("echo_shout", "success", "allow_once", "auto")]


async def test_sigkill_mid_turn_then_resume(
    fake_openai: FakeOpenAI, cli, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home, args = cli
    env = child_env(home, WECLAW_API_KEY=TEST_KEY)
    # round 1 completes (a tool call), round 2 is in flight when the process dies
    fake_openai.push(
        tool_reply(call("echo_say", {"text": "step one"}, id="s1")),
        tool_reply(call("faulty_sleep", {"seconds": 30}, id="s2")),
    )
    proc = await asyncio.create_subprocess_exec(
        *args("do two steps", "--new", "--json"),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    session = ""
    while True:
        line = await asyncio.wait_for(proc.stdout.readline(), 30)
        assert line, "the chat process ended early"
        event = json.loads(line)
        session = event["session_id"]
        if event["event"] == "tool_call_started" and event["call_id"] == "s2":
            break
    proc.send_signal(signal.SIGKILL)
    await proc.wait()

    rows = db_rows(home, "SELECT role, tool_call_id, status FROM messages ORDER BY id")
    assert rows == [
        ("user", None, "complete"),
        ("assistant", None, "complete"),
        ("tool", "s1", "complete"),
        ("assistant", None, "complete"),
    ]
    assert db_rows(home, "SELECT status FROM turns") == [("running",)]

    # restart (in this test process, so a second interpreter start is not paid for) and continue
    fake_openai.push(text_reply("Step two was interrupted; shall I retry?"))
    monkeypatch.setenv("WECLAW_API_KEY", TEST_KEY)
    code, out, err = await run_inproc(
        ["--data-dir", str(home), *args("what happened?", "--session", session)[3:]], capsys
    )
    assert code == 0, err
    assert out.strip() == "Step two was interrupted; shall I retry?"
    sent = fake_openai.messages()
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "tool", "user"]
    assert sent[5]["tool_call_id"] == "s2" and "did not finish" in sent[5]["content"]
    statuses = db_rows(home, "SELECT status FROM turns ORDER BY started_at")
    assert statuses == [("interrupted",), ("completed",)]


async def test_doctor_reports_endpoint_and_key(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("WECLAW_API_KEY", TEST_KEY)
    argv = ["doctor", "--base-url", fake_openai.base_url, "--model", "fake-model"]
    code, out, err = await run_inproc(argv, capsys)
    assert code == 0, out + err
    lines = {line.split()[1]: line for line in out.splitlines()}
    assert lines["endpoint"].startswith("OK") and "2 models available" in lines["endpoint"]
    assert lines["qt"].startswith("OK") and "offscreen" in lines["qt"]  # a real Qt start in a child process
    assert lines["keyring"].split()[0] in ("OK", "WARN")
    assert lines["data"].startswith("OK")
    assert fake_openai.models_headers[0]["Authorization"] == f"Bearer {TEST_KEY}"
    assert os.environ.get("WECLAW_API_KEY") is None  # taken out of the environment before the Qt child ran

    monkeypatch.setenv("WECLAW_API_KEY", TEST_KEY)
    fake_openai.models_status = 401
    code, out, _ = await run_inproc([*argv, "--no-qt", "--json"], capsys)
    assert code == 1
    checks = {c["name"]: c for c in json.loads(out)}
    assert checks["endpoint"]["level"] == "fail" and "rejected the API key (401)" in checks["endpoint"]["detail"]
    assert "qt" not in checks


async def test_models_command(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("WECLAW_API_KEY", TEST_KEY)
    code, out, _ = await run_inproc(["models", "--base-url", fake_openai.base_url], capsys)
    assert code == 0 and out.splitlines() == ["fake-model", "fake-model-2"]
    code, out, _ = await run_inproc(["models", "--presets", "--json"], capsys)
    assert code == 0 and {p["key"] for p in json.loads(out)} >= {"deepseek", "qwen", "ollama", "custom"}
    code, _, err = await run_inproc(["models", "--preset", "nope"], capsys)
    assert code == 2 and "unknown preset 'nope'" in err


async def test_interactive_prompt(fake_openai: FakeOpenAI, chat, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO("first\n\n/new\nsecond\n/quit\nnever sent\n"))
    fake_openai.push(text_reply("one"), text_reply("two"))
    code, out, err = await chat("--new")
    assert code == 0, err
    assert out.splitlines() == ["one", "two"]
    assert err.count("[session ") == 2 and "you> " in err
    assert [m["content"] for m in fake_openai.messages()[1:]] == ["second"]  # /new started a fresh conversation
    assert len(fake_openai.requests) == 2


async def test_json_events_carry_outcomes_as_plain_strings(fake_openai: FakeOpenAI, chat) -> None:
    """--json lines hold the typed outcome (status, error kind, who decided, risk) as plain strings."""
    fake_openai.push(
        tool_reply(call("echo_say", {"text": "hi"}, id="ok"), call("echo_shout", {"text": "x"}, id="no")),
        text_reply("done"),
    )
    code, out, _ = await chat("go", "--json", "--new", "--deny-risky")
    assert code == 0
    events = [json.loads(line) for line in out.splitlines()]
    finished = {e["call_id"]: e for e in events if e["event"] == "tool_call_finished"}
    assert {k: finished["ok"][k] for k in ("status", "error_kind", "decided_by", "risk")} == {
        "status": "success",
        "error_kind": None,
        "decided_by": "policy",
        "risk": "low",
    }
    assert {k: finished["no"][k] for k in ("status", "error_kind", "decided_by", "risk")} == {
        "status": "denied",
        "error_kind": "denied",
        "decided_by": "policy",
        "risk": "high",
    }
    (denied,) = [e for e in events if e["event"] == "tool_call_denied"]
    assert (denied["decided_by"], denied["error_kind"]) == ("policy", "denied")


async def test_tools_and_doctor_use_the_users_tool_policy(
    weclaw_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``weclaw tools`` and ``weclaw doctor`` answer from the exposure computation the app uses, so a tool
    the user switched off is listed as hidden, with why."""
    from weclaw_desktop.settings import Settings, SettingsStore

    code, out, _ = await run_inproc(["tools", "--json", "--no-mcp"], capsys)
    before = {r["name"]: r for r in json.loads(out)}
    assert code == 0 and before["calculator"]["available"]
    code, out, _ = await run_inproc(["doctor", "--no-qt", "--json"], capsys)
    tools_before = next(c for c in json.loads(out) if c["name"] == "tools")["detail"]

    settings = Settings()
    settings.tools.policy = settings.tools.policy.with_switch("calculator", False)
    SettingsStore.open().save(settings)
    code, out, _ = await run_inproc(["tools", "--json", "--no-mcp"], capsys)
    row = {r["name"]: r for r in json.loads(out)}["calculator"]
    assert not row["available"] and [d["code"] for d in row["diagnostics"]] == ["disabled-by-user"]
    code, out, _ = await run_inproc(["doctor", "--no-qt", "--json"], capsys)
    tools_after = next(c for c in json.loads(out) if c["name"] == "tools")["detail"]
    n_before, n_after = int(tools_before.split()[0]), int(tools_after.split()[0])
    assert n_after == n_before - 1
