"""One audit record per tool call, typed like its :class:`CallOutcome`. The SQLite sink lives with the
history (``agent/audit_sink.py``), which stores each enum as its stable string value ('' for none).

The dispatcher writes the record when the call has ended (:meth:`AuditRecord.of`); a
:class:`StartedAuditSink` also gets it when the call starts (``begin``, with the identity fields
``trace_id`` .. ``started_at``, ``risk`` and the approval) and completes that row (``finish``), so a call
that was running when the process died is on record.
"""

from __future__ import annotations

import logging
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from weclaw_desktop.toolkit.base import Origin, Risk, ToolContext, ToolStatus
from weclaw_desktop.toolkit.outcome import ApprovalDecision, CallOutcome, DecidedBy, ErrorKind
from weclaw_desktop.toolkit.redact import redact

log = logging.getLogger("weclaw.audit")


class CallState(StrEnum):
    """Where a call's audit record stands: still running, ended (``status`` says how), or interrupted
    (the process stopped before the call returned; recovery found it running)."""

    RUNNING = "running"
    ENDED = "ended"
    INTERRUPTED = "interrupted"


class AuditRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    trace_id: str
    run_id: str
    session_id: str
    call_id: str
    tool: str
    action: str
    function: str
    origin: Origin
    started_at: float
    duration_ms: float
    status: ToolStatus
    result_len: int
    error_summary: str = ""
    approval: ApprovalDecision | None = None
    decided_by: DecidedBy | None = None
    error_kind: ErrorKind | None = None
    risk: Risk | None = None
    hook: str = ""  # the before hook that blocked the call (decided_by 'hook')
    state: CallState = CallState.ENDED
    waited_ms: float | None = None  # of duration_ms, the time it waited for approval (None: not known)

    @classmethod
    def of(cls, outcome: CallOutcome, ctx: ToolContext, *, started_at: float, trace_id: str) -> AuditRecord:
        result = outcome.result
        return cls(
            trace_id=trace_id,
            run_id=ctx.run_id,
            session_id=ctx.session_id,
            call_id=outcome.call_id,
            tool=outcome.tool,
            action=outcome.action,
            function=outcome.function,
            origin=ctx.origin,
            started_at=started_at,
            duration_ms=result.duration_ms,
            status=result.status,
            result_len=len(result.for_model()),
            error_summary=summarize_error(result.error) if not result.succeeded else "",
            approval=outcome.approval,
            decided_by=outcome.decided_by,
            error_kind=outcome.error,
            risk=outcome.risk,
            hook=outcome.hook,
            waited_ms=outcome.waited_ms,
        )


class AuditSink(Protocol):
    async def record(self, rec: AuditRecord) -> None: ...


@runtime_checkable
class StartedAuditSink(AuditSink, Protocol):
    """A sink that also records a call when it starts: ``begin`` returns a token ``finish`` completes.

    The row exists while the call runs, so a process killed mid-call leaves it on record (as running;
    recovery marks it interrupted).
    """

    async def begin(self, rec: AuditRecord) -> Any: ...

    async def finish(self, token: Any, rec: AuditRecord) -> None: ...


def summarize_error(text: str | None, limit: int = 300) -> str:
    """A short, redacted, single-line summary of an error for the audit trail."""
    if not text:
        return ""
    line = " ".join(redact(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


class MemoryAudit:
    """Keeps records in a list (tests, the CLI without a database)."""

    def __init__(self) -> None:
        self.records: list[AuditRecord] = []

    async def record(self, rec: AuditRecord) -> None:
        self.records.append(rec)


class LogAudit:
    async def record(self, rec: AuditRecord) -> None:
        log.info(
            "call %s %s status=%s kind=%s by=%s %.0fms len=%d %s",
            rec.call_id,
            rec.function,
            rec.status,
            rec.error_kind or "-",
            rec.decided_by or "-",
            rec.duration_ms,
            rec.result_len,
            rec.error_summary,
        )
