"""One audit record per tool call. The SQLite sink lives with the history (agent layer)."""

from __future__ import annotations

import logging
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from weclaw_desktop.toolkit.redact import redact

log = logging.getLogger("weclaw.audit")


class AuditRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    trace_id: str
    run_id: str
    session_id: str
    call_id: str
    tool: str
    action: str
    function: str
    origin: str
    started_at: float
    duration_ms: float
    status: str
    result_len: int
    error_summary: str = ""
    approval: str = ""
    decided_by: str = ""


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
            "call %s %s status=%s %.0fms len=%d %s",
            rec.call_id,
            rec.function,
            rec.status,
            rec.duration_ms,
            rec.result_len,
            rec.error_summary,
        )
