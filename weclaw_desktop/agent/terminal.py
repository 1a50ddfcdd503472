"""Terminal helpers for ``weclaw chat``: a stdin line reader that never blocks exit, and the approval gate.

Input is read by one daemon thread, so Ctrl-C at a prompt ends the program at once (a thread blocked in
``input()`` inside the default executor would keep the process alive until Enter).
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from typing import TextIO

from weclaw_desktop.toolkit.approval import ApprovalDecision, ApprovalRequest, ApprovalResult


class LineReader:
    """Reads lines from a text stream on a daemon thread, one request at a time."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdin
        self._lock = asyncio.Lock()

    def interactive(self) -> bool:
        isatty = getattr(self.stream, "isatty", None)
        return bool(isatty and isatty())

    async def readline(self, prompt: str = "", *, out: TextIO | None = None) -> str | None:
        """One line without its newline, or None at end of input."""
        async with self._lock:
            target = out or sys.stderr
            if prompt:
                target.write(prompt)
                target.flush()
            loop = asyncio.get_running_loop()
            future: asyncio.Future[str] = loop.create_future()

            def deliver(line: str) -> None:
                if not future.done():
                    future.set_result(line)

            def read() -> None:
                try:
                    line = self.stream.readline()
                except (OSError, ValueError):
                    line = ""
                loop.call_soon_threadsafe(deliver, line)

            threading.Thread(target=read, name="weclaw-stdin", daemon=True).start()
            line = await future
            return None if line == "" else line.rstrip("\r\n")


class TerminalGate:
    """Asks on the terminal: allow once / allow for this session / deny. No terminal -> deny, with why."""

    def __init__(self, reader: LineReader, out: TextIO | None = None) -> None:
        self.reader = reader
        self.out = out or sys.stderr

    async def request(self, req: ApprovalRequest) -> ApprovalResult:
        if not self.reader.interactive():
            return ApprovalResult(
                ApprovalDecision.DENY, decided_by="no-gate", note="no terminal to ask; run with --yes to allow"
            )
        args = json.dumps(req.arguments, ensure_ascii=False)
        if len(args) > 300:
            args = args[:299] + "…"
        reason = f" ({req.reason})" if req.reason else ""
        self.out.write(f"\n? {req.function} wants to run [{req.risk.value} risk]{reason}\n  {args}\n")
        while True:
            answer = await self.reader.readline("  allow [o]nce, for this [s]ession, or [d]eny? ", out=self.out)
            choice = (answer or "d").strip().lower()
            if choice in ("o", "once", "y", "yes"):
                return ApprovalResult(ApprovalDecision.ALLOW_ONCE, decided_by="user")
            if choice in ("s", "session"):
                return ApprovalResult(ApprovalDecision.ALLOW_SESSION, decided_by="user")
            if choice in ("d", "deny", "n", "no"):
                return ApprovalResult(ApprovalDecision.DENY, decided_by="user", note="denied at the terminal")
