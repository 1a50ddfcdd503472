"""The SQLite audit sink: one row per tool call (toolkit/audit.py ``AuditRecord``) in ``weclaw.db``.

Audit rows hold no arguments or outputs, only who/what/when/how it ended and a redacted error summary,
and they outlive the session they belong to (deleting a conversation keeps its audit trail).

A call that starts running is recorded at once (:meth:`SqliteAudit.begin`, status ``running``) and the
row is completed when it ends (:meth:`SqliteAudit.finish`); if the process dies in between, recovery
closes the row as ``interrupted`` (:meth:`SqliteAudit.close_runs`, run by the history's recovery).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from weclaw_desktop.storage.db import Database, Migration, register_migrations
from weclaw_desktop.toolkit.audit import AuditRecord

COMPONENT = "audit"
_FIELDS = list(AuditRecord.model_fields)

register_migrations(
    COMPONENT,
    [
        Migration(
            1,
            """
            CREATE TABLE audit (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                trace_id TEXT NOT NULL,
                run_id TEXT NOT NULL,
                session_id TEXT NOT NULL,
                call_id TEXT NOT NULL,
                tool TEXT NOT NULL,
                action TEXT NOT NULL,
                function TEXT NOT NULL,
                origin TEXT NOT NULL,
                started_at REAL NOT NULL,
                duration_ms REAL NOT NULL,
                status TEXT NOT NULL,
                result_len INTEGER NOT NULL,
                error_summary TEXT NOT NULL DEFAULT '',
                approval TEXT NOT NULL DEFAULT '',
                decided_by TEXT NOT NULL DEFAULT ''
            );
            CREATE INDEX audit_session ON audit(session_id, started_at);
            CREATE INDEX audit_run ON audit(run_id);
            """,
        )
    ],
)


class SqliteAudit:
    """An ``AuditSink`` writing to the ``audit`` table (off the event loop)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        db.ensure(COMPONENT)

    async def record(self, rec: AuditRecord) -> None:
        values = rec.model_dump()
        await self.db.run(
            self.db.execute,
            f"INSERT INTO audit({', '.join(_FIELDS)}) VALUES({', '.join('?' for _ in _FIELDS)})",
            tuple(values[f] for f in _FIELDS),
        )

    async def begin(self, rec: AuditRecord) -> int:
        """Record a call that starts now (status ``running``); returns the row to :meth:`finish`."""
        values = {**rec.model_dump(), "status": "running"}
        return await self.db.run(
            self.db.execute,
            f"INSERT INTO audit({', '.join(_FIELDS)}) VALUES({', '.join('?' for _ in _FIELDS)})",
            tuple(values[f] for f in _FIELDS),
        )

    async def finish(self, row: int, rec: AuditRecord) -> None:
        """Complete the row :meth:`begin` wrote with how the call ended."""
        values = rec.model_dump()
        await self.db.run(
            self.db.execute,
            f"UPDATE audit SET {', '.join(f'{f}=?' for f in _FIELDS)} WHERE id=?",
            (*(values[f] for f in _FIELDS), row),
        )

    @staticmethod
    def close_runs(conn: sqlite3.Connection, run_ids: list[str]) -> None:
        """Running rows of abandoned turns become ``interrupted`` (called inside the recovery transaction)."""
        marks = ",".join("?" for _ in run_ids)
        conn.execute(
            f"UPDATE audit SET status='interrupted', error_summary=? WHERE status='running' AND run_id IN ({marks})",
            ("the app stopped before the call returned", *run_ids),
        )

    async def records(self, *, session_id: str | None = None, run_id: str | None = None) -> list[AuditRecord]:
        sql, params = "SELECT * FROM audit", []
        conds = []
        if session_id is not None:
            conds.append("session_id=?")
            params.append(session_id)
        if run_id is not None:
            conds.append("run_id=?")
            params.append(run_id)
        if conds:
            sql += " WHERE " + " AND ".join(conds)
        rows: list[Any] = await self.db.run(self.db.query, sql + " ORDER BY id", tuple(params))
        return [AuditRecord.model_validate({f: r[f] for f in _FIELDS}) for r in rows]
