"""MCP stdio servers die with the app.

The MCP SDK starts a stdio server itself (no FD can be passed), so the server runs under the tool
supervisor in its ``--parent`` mode, which watches the app's pid. Cases (real processes): ``kill -9`` of
``weclaw chat`` while it is connected to a real stdio server (our SDK server, and the npm reference server
``server-everything``) that started a child of its own: the server, its child and the supervisor are gone
within a few seconds, after a tool call went through the supervisor's inherited stdin/stdout unchanged.
The supervisor's parent watch also works without pidfd and PR_SET_PDEATHSIG (the getppid poll that other
POSIX systems get), and a missing server program is still named as such.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from chaos_support import REPO, AsciiFakeOpenAI, Chat, alive, chat_argv, chat_env, file_text, gone, kill_pids
from fakeopenai import call, hang_reply, tool_reply

from weclaw_desktop.paths import app_paths
from weclaw_desktop.settings import McpServerSettings, Settings
from weclaw_desktop.settings.store import SettingsStore

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX; Windows: the SDK's kill-on-close Job Object")

MCP_TESTS = REPO / "tests" / "mcp"
EVERYTHING = (
    MCP_TESTS / "servers" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
)
GUARD = REPO / "weclaw_desktop" / "tools" / "childguard.py"


@pytest.fixture
async def fake() -> AsciiFakeOpenAI:
    server = AsciiFakeOpenAI()
    await server.start()
    yield server  # type: ignore[misc]
    await server.stop()


def _with_child(work: Path, argv: list[str]) -> tuple[str, list[str]]:
    """A server command that first starts a child of its own (``sleep``, same process group), then becomes
    the server (exec): so the test knows the pids of the server and of its child."""
    line = " ".join(f"'{a}'" for a in argv)
    script = f"sleep 300 & echo $! > {work}/child.pid; echo $$ > {work}/server.pid; exec {line}"
    return "sh", ["-c", script]


def _supervisor_of(pid: int) -> int:
    import psutil

    return psutil.Process(pid).ppid()


async def _kill9_case(fake: AsciiFakeOpenAI, tmp_path: Path, server: list[str], call_: object, expect: str) -> None:
    home, work = tmp_path / "data", tmp_path / "work"
    work.mkdir()
    command, args = _with_child(work, server)
    env = chat_env(home, tmp_path)
    SettingsStore.open(app_paths(home)).save(
        Settings(mcp_servers=[McpServerSettings(name="srv", command=command, args=args)])
    )
    fake.push(tool_reply(call_), hang_reply("thinking"))
    argv = [a for a in chat_argv(fake, "use the server", "--new", "--json") if a != "--no-mcp"]
    proc = await asyncio.create_subprocess_exec(
        *argv, env=env, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    chat = Chat(proc)
    pids: list[int] = []
    try:
        pids = [int(await file_text(work / "server.pid")), int(await file_text(work / "child.pid"))]
        pids.append(_supervisor_of(pids[0]))
        finished = await chat.until("tool_call_finished", within=90)
        assert finished["status"] == "success", finished
        await asyncio.wait_for(fake.hanging.wait(), 60)
        # the call's answer came back through the supervisor's inherited stdin/stdout, byte for byte
        results = [str(m["content"]) for m in fake.messages(-1) if m["role"] == "tool"]
        assert any(expect in r for r in results), results
        assert all(alive(p) for p in pids)
        assert pids[2] != proc.pid and _supervisor_of(pids[2]) == proc.pid  # app -> supervisor -> server

        t0 = time.monotonic()
        chat.kill9()
        await proc.wait()
        for pid, what in zip(pids, ("the server", "the server's child", "the supervisor"), strict=True):
            assert await gone(pid, within=5.0), f"{what} (pid {pid}) outlived the app"
        print(f"MCP server tree gone {time.monotonic() - t0:.3f} s after the app's SIGKILL")
    finally:
        kill_pids(pids)
        if proc.returncode is None:
            proc.kill()


async def test_kill9_of_the_app_ends_our_sdk_stdio_server_and_its_child(fake, tmp_path: Path) -> None:
    """What must survive a SIGKILL of the app: nothing of the MCP server it started, child included."""
    await _kill9_case(
        fake,
        tmp_path,
        [sys.executable, str(MCP_TESTS / "mcp_test_server.py")],
        call("mcp_srv_add", {"a": 20, "b": 22}, id="m1"),
        "42",
    )


async def test_kill9_of_the_app_ends_the_npm_reference_server(fake, tmp_path: Path) -> None:
    """The same for a server nobody here wrote (npm server-everything over stdio, under node)."""
    import shutil

    if not EVERYTHING.exists() or shutil.which("node") is None:
        message = "server-everything is not installed: run scripts/setup.sh --test"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    await _kill9_case(
        fake,
        tmp_path,
        ["node", str(EVERYTHING), "stdio"],
        call("mcp_srv_echo", {"message": "passes through untouched: 你好"}, id="e1"),
        "passes through untouched: 你好",
    )


def test_the_parent_watch_works_without_pidfd_or_pdeathsig(tmp_path: Path) -> None:
    """Systems without pidfd or PR_SET_PDEATHSIG (macOS without kqueue, other POSIX, old Linux kernels) get
    the getppid poll: the command still dies soon after the process that started the supervisor."""
    pid_file = tmp_path / "cmd.pid"
    stub = (
        "import os, sys; sys.path.insert(0, sys.argv[1]); import childguard;"
        "os.__dict__.pop('pidfd_open', None); childguard.select.__dict__.pop('kqueue', None);"
        "childguard._linux_prctl = lambda sig: None; sys.exit(childguard.main(sys.argv[2:]))"
    )
    guard = [sys.executable, "-I", "-S", "-c", stub, str(GUARD.parent), "--parent", "--"]
    # a middle process starts the supervisor (start_new_session, like the SDK), then is SIGKILLed
    middle_code = (
        "import subprocess, sys, time; argv = sys.argv[1:];"
        "subprocess.Popen(argv, start_new_session=True); time.sleep(120)"
    )
    command = ["sh", "-c", f"echo $$ > {pid_file}; exec sleep 120"]
    middle = subprocess.Popen([sys.executable, "-c", middle_code, *guard, *command])
    cmd_pid = 0
    try:
        deadline = time.monotonic() + 20
        while not (pid_file.exists() and pid_file.read_text().strip()):
            assert time.monotonic() < deadline, "the command did not start"
            time.sleep(0.05)
        cmd_pid = int(pid_file.read_text())
        assert alive(cmd_pid)
        t0 = time.monotonic()
        os.kill(middle.pid, signal.SIGKILL)
        middle.wait()
        while alive(cmd_pid):
            assert time.monotonic() - t0 < 5, "the command outlived its supervisor's parent"
            time.sleep(0.05)
    finally:
        kill_pids([cmd_pid] if cmd_pid else [])
        middle.kill()


def test_the_supervisor_leaves_the_streams_to_the_command(tmp_path: Path) -> None:
    """stdin and stdout reach the command untouched (binary, nothing read or buffered by the supervisor), and
    the reader sees EOF as soon as the command closes its output, while the command still runs."""
    code = (
        "import sys, time; data = sys.stdin.buffer.read(); sys.stdout.buffer.write(data[::-1]);"
        "sys.stdout.close(); time.sleep(5)"
    )
    payload = bytes(range(256)) * 64 + "你好\n".encode()
    proc = subprocess.Popen(
        [sys.executable, "-I", "-S", str(GUARD), "--parent", "--", sys.executable, "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(payload)
        proc.stdin.close()
        out = proc.stdout.read()  # returns at EOF
        assert out == payload[::-1]
        assert proc.poll() is None, "EOF came only with the exit: the supervisor held stdout open"
        assert proc.wait(30) == 0
    finally:
        proc.kill()


def test_a_missing_server_program_is_named(tmp_path: Path) -> None:
    """Behind the supervisor, a missing program would only be exit status 127: it is checked first."""
    from weclaw_desktop.tools import lifetime

    with pytest.raises(FileNotFoundError):
        lifetime.check_program("no-such-mcp-server-xyz", path=os.environ.get("PATH"))
    script = tmp_path / "server.sh"
    script.write_text("#!/bin/sh\n")
    with pytest.raises(PermissionError):
        lifetime.check_program(str(script), path=None)
    script.chmod(0o755)
    lifetime.check_program("./server.sh", path=None, cwd=str(tmp_path))
    assert json.dumps(lifetime.watching_parent(["x"])[-2:]) == '["--", "x"]'
