"""Helpers of the chaos tests: ``weclaw chat`` as a real process, the database as stored, processes left.

Every case here is a crash or a fault a user's machine produces: a process killed with SIGKILL, a
database another program holds, a full disk, bytes that are not UTF-8. The helpers start the real CLI
(``python -m weclaw_desktop chat``) with the real tools.json against the fake OpenAI server of the test
process, and read back what a user would see (stdout, stderr, exit code), what is stored (SQLite rows)
and what is left running (pids).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fakeopenai import FakeOpenAI
from polling import reached, until

REPO = Path(__file__).resolve().parents[2]
TEST_KEY = "sk-test-chaos-5b7e0c1d9a3f"


class AsciiFakeOpenAI(FakeOpenAI):
    """The fake server writing JSON with ASCII escapes: a lone surrogate travels as ``\\ud800`` like from a
    real server that splits strings by UTF-16 code units."""

    def _frame(self, chunk: dict[str, Any], chat_id: str) -> bytes:
        full = {"id": chat_id, "object": "chat.completion.chunk", "created": int(time.time()), "model": self.model}
        return b"data: " + json.dumps({**full, **chunk}).encode("ascii") + b"\n\n"


class AnsweringFakeOpenAI(AsciiFakeOpenAI):
    """Answers each request from what it asks (``decide(body) -> Reply``), not from a queue: for several
    processes talking to one server at once, where the order of their requests is not fixed."""

    def __init__(self, decide: Any) -> None:
        super().__init__()
        self.decide = decide

    async def _completions(self, request: Any) -> Any:
        body = await request.json()
        self.script.appendleft(self.decide(body))
        return await super()._completions(request)


def chat_env(home: Path, user_home: Path | None = None, **extra: str) -> dict[str, str]:
    """The environment of a ``weclaw chat`` child: this worktree's code, its own data and home folder."""
    env = {k: v for k, v in os.environ.items() if k not in ("WECLAW_API_KEY", "OPENAI_API_KEY", "WECLAW_TOOLS")}
    env.update(
        PYTHONPATH=str(REPO),
        WECLAW_HOME=str(home),
        WECLAW_API_KEY=TEST_KEY,
        PYTHONUNBUFFERED="1",
        LANG="C.UTF-8",
        QT_QPA_PLATFORM="offscreen",
    )
    if user_home is not None:
        env["HOME"] = str(user_home)
        env["USERPROFILE"] = str(user_home)
    env.update(extra)
    return env


def chat_argv(fake: FakeOpenAI, *args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "weclaw_desktop",
        "chat",
        *args,
        "--yes",
        "--no-mcp",
        "--exposure",
        "all",
        "--base-url",
        fake.base_url,
        "--model",
        "fake-model",
    ]


@dataclass
class Chat:
    """A running ``weclaw chat --json`` process and the events it printed so far."""

    proc: asyncio.subprocess.Process
    events: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    async def start(cls, fake: FakeOpenAI, env: dict[str, str], *args: str, stdin: bytes | None = None) -> Chat:
        proc = await asyncio.create_subprocess_exec(
            *chat_argv(fake, *args, "--json"),
            env=env,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        if stdin is not None:
            assert proc.stdin is not None
            proc.stdin.write(stdin)
            await proc.stdin.drain()
            proc.stdin.close()
        return cls(proc)

    async def until(self, event: str, *, within: float = 60.0, **match: Any) -> dict[str, Any]:
        """Read events until one named ``event`` whose fields equal ``match``; return it."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + within
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {event} {match} within {within} s; got {[e['event'] for e in self.events]}")
            line = await asyncio.wait_for(self.proc.stdout.readline(), left)
            if not line:
                err = b""
                if self.proc.stderr is not None:
                    err = await self.proc.stderr.read()
                raise AssertionError(f"chat ended before {event}: {err.decode(errors='replace')[-2000:]}")
            item = json.loads(line)
            self.events.append(item)
            if item["event"] == event and all(item.get(k) == v for k, v in match.items()):
                return item

    async def finish(self, within: float = 60.0) -> tuple[int, str, str]:
        out, err = await asyncio.wait_for(self.proc.communicate(), within)
        for line in out.decode().splitlines():
            self.events.append(json.loads(line))
        return self.proc.returncode or 0, out.decode(), err.decode(errors="replace")

    def kill9(self) -> None:
        self.proc.kill()  # SIGKILL on POSIX: no cleanup of any kind runs in the chat process


async def run_chat(
    fake: FakeOpenAI, env: dict[str, str], *args: str, within: float = 90.0, stdin: bytes | None = None
) -> tuple[int, str, str]:
    """One ``weclaw chat`` (text output) to the end: (exit code, stdout, stderr). ``stdin``: typed lines."""
    proc = await asyncio.create_subprocess_exec(
        *chat_argv(fake, *args),
        env=env,
        stdin=asyncio.subprocess.DEVNULL if stdin is None else asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(stdin), within)
    return proc.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace")


def database(home: Path) -> Path:
    return home / "data" / "weclaw.db"


def rows(home: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(database(home), timeout=10)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def assert_clean_stderr(err: str) -> None:
    """What a person must never see: a Python traceback or logging's own error report."""
    assert "Traceback (most recent call last)" not in err, err[-3000:]
    assert "--- Logging error ---" not in err, err[-3000:]


def alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


async def gone(pid: int, within: float = 5.0) -> bool:
    """True once ``pid`` no longer runs (SIGKILL is delivered asynchronously: allow the kernel a moment)."""
    return await reached(lambda: not alive(pid), within=within)


async def file_text(path: Path, within: float = 30.0) -> str:
    """The text ``path`` holds once something was written to it."""

    def read() -> str:
        with contextlib.suppress(OSError):
            return path.read_text().strip()
        return ""

    return await until(lambda: asyncio.to_thread(read), within=within, interval=0.05, message=f"{path} not written")


def kill_pids(pids: list[int]) -> None:
    """Test cleanup: make sure nothing a failed test started keeps running."""
    import signal

    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def small_disk(folder: Path, size: str = "3m") -> Any:
    """A tmpfs of ``size`` mounted at ``folder`` (needs root and a kernel that allows it), or None."""
    folder.mkdir(parents=True, exist_ok=True)
    if sys.platform != "linux" or os.geteuid() != 0:
        yield None
        return
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True, check=False
    )
    if done.returncode != 0:
        yield None
        return
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)
