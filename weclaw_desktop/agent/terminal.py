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

from weclaw_desktop.i18n import tr
from weclaw_desktop.toolkit.approval import ApprovalDecision, ApprovalRequest, ApprovalResult, DecidedBy


class LineReader:
    """Lines from a text stream, read by one daemon thread and handed to the event loop in order.

    A prompt that is abandoned (Stop while an approval question waits) loses no input: the next
    :meth:`readline` gets the next line.
    """

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdin
        self._queue: asyncio.Queue[str] | None = None
        self._lock = asyncio.Lock()

    def interactive(self) -> bool:
        isatty = getattr(self.stream, "isatty", None)
        return bool(isatty and isatty())

    def _start(self) -> asyncio.Queue[str]:
        queue: asyncio.Queue[str] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        def pump() -> None:
            while True:
                try:
                    line = self.stream.readline()
                except (OSError, ValueError):
                    line = ""
                try:
                    loop.call_soon_threadsafe(queue.put_nowait, line)
                except RuntimeError:  # the loop has closed
                    return
                if line == "":
                    return

        threading.Thread(target=pump, name="weclaw-stdin", daemon=True).start()
        return queue

    async def readline(self, prompt: str = "", *, out: TextIO | None = None) -> str | None:
        """One line without its newline, or None at end of input."""
        async with self._lock:
            if self._queue is None:
                self._queue = self._start()
            target = out or sys.stderr
            if prompt:
                target.write(prompt)
                target.flush()
            line = await self._queue.get()
            if line == "":
                self._queue.put_nowait("")  # stay at end of input
                return None
            return line.rstrip("\r\n")


class TerminalGate:
    """Asks on the terminal: allow once / allow for this session / deny. No terminal -> deny, with why."""

    def __init__(self, reader: LineReader, out: TextIO | None = None) -> None:
        self.reader = reader
        self.out = out or sys.stderr

    async def request(self, req: ApprovalRequest) -> ApprovalResult:
        if not self.reader.interactive():
            return ApprovalResult(
                ApprovalDecision.DENY, decided_by=DecidedBy.NO_GATE, note="no terminal to ask; run with --yes to allow"
            )
        args = json.dumps(req.arguments, ensure_ascii=False)
        if len(args) > 300:
            args = args[:299] + "…"
        reason = f" ({req.reason})" if req.reason else ""
        risk = tr(f"risk.{req.risk.value}")
        self.out.write("\n" + tr("cli.approval.ask", function=req.function, risk=risk, reason=reason) + f"\n  {args}\n")
        while True:
            answer = await self.reader.readline("  " + tr("cli.approval.choices") + " ", out=self.out)
            choice = (answer or "d").strip().lower()
            if choice in ("o", "once", "y", "yes", "一次", "是"):
                return ApprovalResult(ApprovalDecision.ALLOW_ONCE, decided_by=DecidedBy.USER)
            if choice in ("s", "session", "本次会话"):
                return ApprovalResult(ApprovalDecision.ALLOW_SESSION, decided_by=DecidedBy.USER)
            if choice in ("d", "deny", "n", "no", "拒绝", "否"):
                return ApprovalResult(ApprovalDecision.DENY, decided_by=DecidedBy.USER, note="denied at the terminal")
