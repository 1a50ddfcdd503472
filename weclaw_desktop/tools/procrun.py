"""Run a child process for the agent: own process group, bounded output, timeout, killed on Stop.

Used by the shell and python_runner tools. The child gets its own process group (a new session on POSIX,
``CREATE_NEW_PROCESS_GROUP`` on Windows) so that on timeout or cancellation the whole tree is killed, not
only the shell: ``sleep 100 & wait`` leaves nothing behind. Output is read as it comes into a buffer that
keeps the head and the tail, so a command printing gigabytes cannot exhaust memory.

The tree also dies with the app (``lifetime.py``): a supervisor that watches the app's lifeline on
POSIX, a kill-on-close Job Object on Windows. So ``kill -9`` of the app, or a crash, ends a running
command and everything it started instead of letting it finish its side effects unseen.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from weclaw_desktop.toolkit.base import ToolResult, ToolStatus
from weclaw_desktop.tools import lifetime
from weclaw_desktop.tools.textio import sniff

IS_WINDOWS = sys.platform == "win32"
PIPE_GRACE_S = 1.0  # after the main process exits, how long leftover children may hold the output open


class HeadTail:
    """Keeps the first ``head`` and the last ``tail`` bytes of a stream and counts the rest."""

    def __init__(self, head: int, tail: int) -> None:
        self.head_limit, self.tail_limit = head, tail
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.last_line = b""

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.tail_limit:
                del self.tail[: len(self.tail) - self.tail_limit]
        lines = (self.head if not self.tail else self.tail).rstrip().rsplit(b"\n", 1)
        self.last_line = bytes(lines[-1][-200:])

    @property
    def omitted(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    def text(self) -> str:
        if not self.tail:
            return decode_output(bytes(self.head))
        if self.omitted <= 0:
            return decode_output(bytes(self.head + self.tail))
        head = decode_output(bytes(self.head))
        tail = decode_output(bytes(self.tail))
        return f"{head}\n… [{self.omitted} bytes omitted] …\n{tail}"


def decode_output(data: bytes) -> str:
    """Child output is usually UTF-8; Chinese Windows tools may print GBK (cp936)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    enc = sniff(data[:65536]).encoding or "utf-8"
    return data.decode(enc, errors="replace")


@dataclass
class ProcessOutcome:
    exit_code: int | None
    stdout: HeadTail
    stderr: HeadTail
    duration_s: float
    timed_out: bool = False
    leftovers_killed: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def truncated(self) -> bool:
        return self.stdout.omitted > 0 or self.stderr.omitted > 0


async def _pump(stream: asyncio.StreamReader | None, sink: HeadTail) -> None:
    if stream is None:
        return
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            return
        sink.feed(chunk)


async def kill_tree(proc: asyncio.subprocess.Process) -> None:
    """Kill the process and everything it started (its process group / job tree)."""
    if IS_WINDOWS:
        with contextlib.suppress(OSError):
            killer = await asyncio.create_subprocess_exec(
                "taskkill",
                "/F",
                "/T",
                "/PID",
                str(proc.pid),
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
            )
            await asyncio.wait_for(killer.wait(), 10)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


async def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout_s: float,
    output_limit: int,
    progress: Callable[[float | None, str], None] | None = None,
) -> ProcessOutcome:
    """Run ``argv`` and collect its output. On cancellation the whole tree is killed and the error re-raised."""
    started = time.monotonic()
    if not IS_WINDOWS and shutil.which(argv[0], path=env.get("PATH")) is None:  # the supervisor would exit 127
        raise FileNotFoundError(2, "No such file or directory", argv[0])
    wrapped, spawn = lifetime.wrap(argv)
    proc = await asyncio.create_subprocess_exec(
        *wrapped,
        cwd=str(cwd),
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        **spawn,
    )
    lifetime.adopt(proc.pid)
    head = output_limit * 2 // 3
    out, err = HeadTail(head, output_limit - head), HeadTail(head // 2, (output_limit - head) // 2)
    readers = [asyncio.ensure_future(_pump(proc.stdout, out)), asyncio.ensure_future(_pump(proc.stderr, err))]
    ticker = asyncio.ensure_future(_tick(progress, started, out)) if progress else None
    outcome = ProcessOutcome(None, out, err, 0.0)
    try:
        try:
            await asyncio.wait_for(_exited(proc), timeout_s)
        except TimeoutError:
            outcome.timed_out = True
            await kill_tree(proc)
            await asyncio.wait_for(_exited(proc), 10)
        # the main process is gone; children that still hold the pipes are leftovers
        _done, pending = await asyncio.wait(readers, timeout=PIPE_GRACE_S)
        if pending:
            await kill_tree(proc)
            outcome.leftovers_killed = not outcome.timed_out
            await asyncio.wait(pending, timeout=PIPE_GRACE_S)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), PIPE_GRACE_S)
    except asyncio.CancelledError:
        await asyncio.shield(_stop(proc, readers))
        raise
    finally:
        if ticker is not None:
            ticker.cancel()
        for reader in readers:
            reader.cancel()
    outcome.exit_code = proc.returncode
    outcome.duration_s = time.monotonic() - started
    return outcome


async def _exited(proc: asyncio.subprocess.Process) -> int:
    """Wait until the main process has exited.

    Not ``proc.wait()``: before Python 3.12 it also waits until every pipe is closed, which never happens
    while a background child still holds the output open.
    """
    delay = 0.005
    while proc.returncode is None:
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)
    return proc.returncode


async def _stop(proc: asyncio.subprocess.Process, readers: Sequence[asyncio.Future[None]]) -> None:
    await kill_tree(proc)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(_exited(proc), 5)
    for reader in readers:
        reader.cancel()


async def _tick(progress: Callable[[float | None, str], None], started: float, out: HeadTail) -> None:
    while True:
        await asyncio.sleep(1.0)
        elapsed = time.monotonic() - started
        last = decode_output(out.last_line).strip()
        progress(None, f"running {elapsed:.0f} s" + (f": {last}" if last else ""))


def snapshot(folder: Path, limit: int = 2000) -> dict[str, float]:
    """Top-level files of ``folder`` with their modification times (to spot files a run produced)."""
    found: dict[str, float] = {}
    with contextlib.suppress(OSError), os.scandir(folder) as it:
        for n, entry in enumerate(it):
            if n >= limit:
                break
            with contextlib.suppress(OSError):
                if entry.is_file(follow_symlinks=False):
                    found[entry.path] = entry.stat().st_mtime
    return found


def produced(before: dict[str, float], after: dict[str, float]) -> list[str]:
    return sorted(p for p, mtime in after.items() if before.get(p) != mtime)


def format_outcome(outcome: ProcessOutcome, title: str) -> str:
    parts = [title]
    if outcome.timed_out:
        parts.append(f"stopped after {outcome.duration_s:.1f} s (timeout); the process and its children were killed")
    else:
        parts.append(f"exit code {outcome.exit_code} · {outcome.duration_s:.2f} s")
    if outcome.leftovers_killed:
        parts.append("background processes still attached to the output were stopped")
    parts.extend(outcome.notes)
    stdout, stderr = outcome.stdout.text(), outcome.stderr.text()
    if stdout:
        parts.append("--- stdout ---\n" + stdout.rstrip("\n"))
    if stderr:
        parts.append("--- stderr ---\n" + stderr.rstrip("\n"))
    if not stdout and not stderr:
        parts.append("(no output)")
    return "\n".join(parts)


def outcome_result(
    outcome: ProcessOutcome, text: str, cwd: Path, files: list[str], *, failure_hint: str | None = None
) -> ToolResult:
    """The ToolResult of a finished child process: text, exit data, produced files, timeout status.

    A non-zero exit is a failure only when ``failure_hint`` is given (a Python snippet that raised); a shell
    command's exit code is information the model reads (grep finding nothing exits 1).
    """
    data = {
        "exit_code": outcome.exit_code,
        "timed_out": outcome.timed_out,
        "duration_s": round(outcome.duration_s, 3),
        "cwd": str(cwd),
        "truncated": outcome.truncated,
    }
    if outcome.timed_out:
        result = ToolResult.fail(text, status=ToolStatus.TIMEOUT, data=data)
    elif failure_hint is not None and outcome.exit_code != 0:
        result = ToolResult.fail(f"{text}\n{failure_hint}", data=data)
    else:
        result = ToolResult.ok(text, data=data, files=files)
    result.truncated = outcome.truncated
    return result
