"""Children die with the app, and every call that may have run is on record.

Cases (real processes): ``kill -9`` of ``weclaw chat`` during a long ``shell_run`` ends the command and
its children at once and their side effect never happens; the call's tool_calls and audit rows exist
while it runs (status running) and the next start closes them as interrupted, without running the
command again; a background job a command left behind (output redirected) dies with the app too; Ctrl-C
still kills the command tree and records "cancelled"; a supervisor started from a thread that ends does
not take that for the app's death.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from chaos_support import (
    AsciiFakeOpenAI,
    Chat,
    alive,
    assert_clean_stderr,
    chat_env,
    file_text,
    gone,
    kill_pids,
    rows,
    run_chat,
)
from fakeopenai import call, hang_reply, text_reply, tool_reply

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals; Windows uses the Job Object")


@pytest.fixture
async def fake() -> AsciiFakeOpenAI:
    server = AsciiFakeOpenAI()
    await server.start()
    yield server  # type: ignore[misc]
    await server.stop()


def _shell(command: str, call_id: str) -> object:
    return call("shell_run", {"command": command, "timeout_s": 120}, id=call_id)


async def test_kill9_during_shell_run_ends_the_tree_and_the_call_is_recorded(fake, tmp_path: Path) -> None:
    """What must survive a SIGKILL of the app: nothing of the command keeps running, its side effect never
    happens, and the call is on record (running, then interrupted) without being run again."""
    home, work = tmp_path / "data", tmp_path / "work"
    work.mkdir()
    command = (
        f"echo $$ > {work}/shell.pid; sleep 30 & echo $! > {work}/child.pid; "
        f"sleep 3; echo done > {work}/side-effect; wait"
    )
    fake.push(tool_reply(_shell(command, "k1")))
    chat = await Chat.start(fake, chat_env(home, tmp_path), "run the long job", "--new")
    started = await chat.until("tool_call_started", call_id="k1")
    pids = [int(await file_text(work / "shell.pid")), int(await file_text(work / "child.pid"))]
    try:
        assert all(alive(p) for p in pids)
        # while it runs, the call is on record
        assert rows(home, "SELECT call_id, status FROM tool_calls") == [("k1", "running")]
        assert rows(home, "SELECT call_id, status, function FROM audit") == [("k1", "running", "shell_run")]

        t0 = time.monotonic()
        chat.kill9()
        await chat.proc.wait()
        assert all([await gone(p, within=3.0) for p in pids]), "the command outlived the app"
        print(f"command tree gone {time.monotonic() - t0:.3f} s after the app's SIGKILL")
        await asyncio.sleep(3.5)  # past the moment the side effect was due
        assert not (work / "side-effect").exists()
    finally:
        kill_pids(pids)

    # the next start: the turn and the call are closed as interrupted; the command is not run again
    fake.push(text_reply("The long job was interrupted. Shall I run it again?"))
    session = started["session_id"]
    code, out, err = await run_chat(fake, chat_env(home, tmp_path), "what happened?", "--session", session)
    assert code == 0, err
    assert_clean_stderr(err)
    assert "interrupted" in out
    assert rows(home, "SELECT status FROM turns ORDER BY started_at") == [("interrupted",), ("completed",)]
    assert rows(home, "SELECT call_id, status FROM tool_calls") == [("k1", "interrupted")]
    assert rows(home, "SELECT call_id, status FROM audit") == [("k1", "interrupted")]
    sent = fake.messages()
    tool_msgs = [m for m in sent if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == ["k1"] and "did not finish" in tool_msgs[0]["content"]
    assert len(fake.requests) == 2  # no retry of the command behind the user's back


async def test_a_background_job_left_by_a_command_dies_with_the_app(fake, tmp_path: Path) -> None:
    """A job a finished command left running (output redirected, so the call ended normally) is still tied
    to the app: when the app is killed, it dies too."""
    home, work = tmp_path / "data", tmp_path / "work"
    work.mkdir()
    fake.push(
        tool_reply(_shell(f"sleep 60 >/dev/null 2>&1 & echo $! > {work}/bg.pid; echo started", "b1")),
        hang_reply("thinking"),
    )
    chat = await Chat.start(fake, chat_env(home, tmp_path), "start a background job", "--new")
    finished = await chat.until("tool_call_finished", call_id="b1")
    assert finished["status"] == "success"
    bg = int(await file_text(work / "bg.pid"))
    try:
        await asyncio.wait_for(fake.hanging.wait(), 30)
        assert alive(bg), "the job should run while the app runs"
        chat.kill9()
        await chat.proc.wait()
        assert await gone(bg, within=4.0), "the background job outlived the app"
    finally:
        kill_pids([bg])


async def test_ctrl_c_kills_the_command_tree_and_records_cancelled(fake, tmp_path: Path) -> None:
    """What held must keep holding: Ctrl-C (SIGINT) stops the turn, kills the command and its children,
    records the call as cancelled and exits 130."""
    home, work = tmp_path / "data", tmp_path / "work"
    work.mkdir()
    fake.push(tool_reply(_shell(f"sleep 30 & echo $! > {work}/child.pid; sleep 30", "c1")))
    chat = await Chat.start(fake, chat_env(home, tmp_path), "run it", "--new")
    await chat.until("tool_call_started", call_id="c1")
    child = int(await file_text(work / "child.pid"))
    try:
        chat.proc.send_signal(signal.SIGINT)
        code, _out, err = await chat.finish(30)
        assert code == 130, err
        assert_clean_stderr(err)
        assert await gone(child, within=3.0)
        assert rows(home, "SELECT call_id, status FROM tool_calls") == [("c1", "cancelled")]
        assert rows(home, "SELECT status FROM audit") == [("cancelled",)]
        assert rows(home, "SELECT status FROM turns") == [("cancelled",)]
        assert [e["event"] for e in chat.events][-1] == "turn_done"
    finally:
        kill_pids([child])


def test_a_supervisor_started_by_a_thread_that_ends_keeps_the_command(tmp_path: Path) -> None:
    """PR_SET_PDEATHSIG fires when the *thread* that forked the supervisor ends; the supervisor checks that
    the app itself is gone before it kills anything, so a tool started from a worker thread keeps running."""
    from weclaw_desktop.tools import lifetime

    out = tmp_path / "out.txt"
    procs: list[subprocess.Popen[bytes]] = []

    def start() -> None:
        argv, extra = lifetime.wrap(["/bin/sh", "-c", f"sleep 1; echo survived > {out}"])
        procs.append(subprocess.Popen(argv, **extra))

    worker = threading.Thread(target=start)
    worker.start()
    worker.join()  # the forking thread is gone now
    try:
        assert procs[0].wait(10) == 0
        assert out.read_text().strip() == "survived"
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()


def test_the_supervisor_reports_the_command_status_faithfully(tmp_path: Path) -> None:
    """Exit codes, death by signal and a missing program look the same as without the supervisor."""
    from weclaw_desktop.tools import lifetime

    def run(*argv: str) -> subprocess.CompletedProcess[bytes]:
        wrapped, extra = lifetime.wrap(list(argv))
        return subprocess.run(wrapped, capture_output=True, timeout=20, check=False, **extra)

    assert run("/bin/sh", "-c", "exit 7").returncode == 7
    assert run("/bin/sh", "-c", "echo out; echo err >&2").stdout == b"out\n"
    assert run("/bin/sh", "-c", "kill -TERM $$").returncode == -signal.SIGTERM
    missing = run("/nonexistent/program")
    assert missing.returncode == 127 and b"cannot start /nonexistent/program" in missing.stderr


def test_lifeline_is_not_inherited_by_other_children() -> None:
    """Only supervisors get the lifeline's read end, and nobody gets the write end: a child of the app that
    is not a supervisor must not keep the app's 'alive' signal open after the app dies."""
    from weclaw_desktop.tools import lifetime

    fd = lifetime.lifeline_fd()
    assert not os.get_inheritable(fd)
    listing = subprocess.run(
        [sys.executable, "-c", "import os, json; print(json.dumps(sorted(os.listdir('/proc/self/fd'))))"],
        capture_output=True,
        check=True,
    )
    fds = {int(x) for x in json.loads(listing.stdout)}
    assert fd not in fds
