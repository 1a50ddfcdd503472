"""The SQLite audit sink: one row per tool call (toolkit/audit.py ``AuditRecord``) in ``weclaw.db``.

Audit rows hold no arguments or outputs, only who/what/when/how it ended and a redacted error summary,
and they outlive the session they belong to (deleting a conversation keeps its audit trail).

Columns hold stable strings: each enum's value (``ToolStatus``, ``ApprovalDecision``, ``DecidedBy``,
``ErrorKind``, ``Risk``, ``Origin``), and '' where the record has none. Migration 2 added ``error_kind``,
``risk`` and ``hook``, and split the old ``decided_by='hook:NAME'`` rows into ``'hook'`` + ``hook=NAME``.
Migration 3 added ``waited_ms``: the part of ``duration_ms`` the call waited for the user's approval (NULL in
rows written before it: not known, read back as None).

A call that starts running is recorded at once (:meth:`SqliteAudit.begin`: ``status='running'``) and the
row is completed when it ends (:meth:`SqliteAudit.finish`); if the process dies in between, recovery
closes it as ``status='interrupted'`` (:meth:`SqliteAudit.close_runs`, run inside the history's
recovery). Read back, such rows have ``state`` RUNNING or INTERRUPTED (``ToolStatus`` CANCELLED: the
call did not end by itself).
"""

from __future__ import annotations

import sqlite3
from enum import Enum
from typing import Any

from weclaw_desktop.storage.db import Database, Migration, register_migrations
from weclaw_desktop.toolkit.audit import AuditRecord, CallState
from weclaw_desktop.toolkit.base import ToolStatus

COMPONENT = "audit"
_FIELDS = [f for f in AuditRecord.model_fields if f != "state"]  # state is read from status, not stored
_OPTIONAL = ("approval", "decided_by", "error_kind", "risk")  # None is stored as ''

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
        ),
        Migration(
            2,
            """
            ALTER TABLE audit ADD COLUMN error_kind TEXT NOT NULL DEFAULT '';
            ALTER TABLE audit ADD COLUMN risk TEXT NOT NULL DEFAULT '';
            ALTER TABLE audit ADD COLUMN hook TEXT NOT NULL DEFAULT '';
            UPDATE audit SET hook = substr(decided_by, 6), decided_by = 'hook' WHERE decided_by LIKE 'hook:%';
            """,
        ),
        Migration(3, "ALTER TABLE audit ADD COLUMN waited_ms REAL;"),
    ],
)


def _column(value: Any, name: str = "") -> Any:
    if value is None:
        return "" if name in _OPTIONAL else None  # an enum left out is ''; a number not known is NULL
    return value.value if isinstance(value, Enum) else value


class SqliteAudit:
    """An ``AuditSink`` writing to the ``audit`` table (off the event loop)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        db.ensure(COMPONENT)

    async def record(self, rec: AuditRecord) -> None:
        await self.db.run(
            self.db.execute,
            f"INSERT INTO audit({', '.join(_FIELDS)}) VALUES({', '.join('?' for _ in _FIELDS)})",
            tuple(_column(getattr(rec, f), f) for f in _FIELDS),
        )

    async def begin(self, rec: AuditRecord) -> int:
        """Record a call that starts now (``status='running'``); returns the row for :meth:`finish`."""
        values = [_column(getattr(rec, f), f) for f in _FIELDS]
        values[_FIELDS.index("status")] = CallState.RUNNING.value
        return await self.db.run(
            self.db.execute,
            f"INSERT INTO audit({', '.join(_FIELDS)}) VALUES({', '.join('?' for _ in _FIELDS)})",
            tuple(values),
        )

    async def finish(self, row: int, rec: AuditRecord) -> None:
        """Complete the row :meth:`begin` wrote with how the call ended."""
        await self.db.run(
            self.db.execute,
            f"UPDATE audit SET {', '.join(f'{f}=?' for f in _FIELDS)} WHERE id=?",
            (*(_column(getattr(rec, f), f) for f in _FIELDS), row),
        )

    @staticmethod
    def close_runs(conn: sqlite3.Connection, run_ids: list[str]) -> None:
        """Running rows of abandoned turns become ``interrupted`` (called inside the recovery transaction)."""
        marks = ",".join("?" for _ in run_ids)
        conn.execute(
            f"UPDATE audit SET status=?, error_summary=? WHERE status=? AND run_id IN ({marks})",
            (
                CallState.INTERRUPTED.value,
                "the app stopped before the call returned",
                CallState.RUNNING.value,
                *run_ids,
            ),
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
        return [_record(r) for r in rows]


def _record(row: Any) -> AuditRecord:
    values = {f: row[f] for f in _FIELDS}
    if values["status"] in (CallState.RUNNING.value, CallState.INTERRUPTED.value):
        values["state"], values["status"] = values["status"], ToolStatus.CANCELLED.value
    for name in _OPTIONAL:
        values[name] = values[name] or None
    return AuditRecord.model_validate(values)
