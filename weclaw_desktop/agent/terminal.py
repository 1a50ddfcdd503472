"""Terminal helpers for ``weclaw chat``: a stdin line reader that never blocks exit, and the approval gate.

Input is read by one daemon thread, so Ctrl-C at a prompt ends the program at once (a thread blocked in
``input()`` inside the default executor would keep the process alive until Enter).
"""

from __future__ import annotations

import asyncio
import sys
import threading
from datetime import UTC, datetime
from typing import TextIO

from weclaw_desktop.i18n import language, tr
from weclaw_desktop.toolkit.approval import (
    AllowRule,
    ApprovalDecision,
    ApprovalRequest,
    ApprovalResult,
    DecidedBy,
    Scope,
    scope_folder,
)
from weclaw_desktop.toolkit.approval_text import arguments_text, origin, visible, why


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
    """Asks on the terminal, one call at a time and in order (a second call waits until the first is
    answered, so an answer can never land on the wrong question). Shows what will happen, why it asks,
    where the request came from, and every argument in full (control characters escaped, runs of spaces
    counted: nothing is cut or hidden). Enter alone denies. No terminal -> deny, with why."""

    def __init__(self, reader: LineReader, out: TextIO | None = None) -> None:
        self.reader = reader
        self.out = out or sys.stderr
        self._one_at_a_time = asyncio.Lock()  # FIFO: questions are asked in the order the calls came

    async def request(self, req: ApprovalRequest) -> ApprovalResult:
        if not self.reader.interactive():
            return ApprovalResult(
                ApprovalDecision.DENY, decided_by=DecidedBy.NO_GATE, note="no terminal to ask; run with --yes to allow"
            )
        async with self._one_at_a_time:
            return await self._ask(req)

    async def _ask(self, req: ApprovalRequest) -> ApprovalResult:
        lang = language()
        summary = req.summary.get(lang) if req.summary is not None else f"{req.tool} → {req.action}"
        lines = ["", tr("cli.approval.header", summary=visible(summary))]
        lines.append(
            tr("cli.approval.meta", function=req.function, risk=tr(f"risk.{req.risk.value}"), origin=origin(req, lang))
        )
        reason = why(req, lang)
        if reason:
            lines.append(tr("cli.approval.why", why=reason))
        if req.arguments:
            lines.append(tr("cli.approval.args"))
            lines += ["    " + line for line in arguments_text(req.arguments).split("\n")]
        extra = ""
        if req.paths:
            extra += tr("cli.approval.folder")
        if req.mcp_server:
            extra += tr("cli.approval.server")
        self.out.write("\n".join(lines) + "\n")
        self.out.flush()
        while True:
            answer = await self.reader.readline("  " + tr("cli.approval.choices_full", extra=extra) + " ", out=self.out)
            choice = (answer or "").strip().lower()
            if choice in ("o", "once", "y", "yes", "一次", "是"):
                return ApprovalResult(ApprovalDecision.ALLOW_ONCE, decided_by=DecidedBy.USER)
            if choice in ("s", "session", "本次会话"):
                return ApprovalResult(ApprovalDecision.ALLOW_SESSION, decided_by=DecidedBy.USER)
            if choice in ("a", "always", "总是"):
                return _always(req, "function")
            if choice in ("f", "folder") and req.paths:
                return _always(req, "folder")
            if choice in ("r", "server") and req.mcp_server:
                return _always(req, "server")
            if choice in ("", "d", "deny", "n", "no", "拒绝", "否") or answer is None:
                return ApprovalResult(ApprovalDecision.DENY, decided_by=DecidedBy.USER, note="denied at the terminal")
            self.out.write(tr("cli.approval.again") + "\n")


def _always(req: ApprovalRequest, scope: Scope) -> ApprovalResult:
    rule = AllowRule(
        scope=scope,
        tool=req.tool,
        function="" if scope == "server" else req.function,
        folder=scope_folder(req) if scope == "folder" else "",
        created=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    return ApprovalResult(ApprovalDecision.ALLOW_ALWAYS, decided_by=DecidedBy.USER, remember=rule)
