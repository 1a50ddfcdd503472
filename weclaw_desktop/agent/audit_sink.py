"""The SQLite audit sink: one row per tool call (toolkit/audit.py ``AuditRecord``) in ``weclaw.db``.

Audit rows hold no arguments or outputs, only who/what/when/how it ended and a redacted error summary,
and they outlive the session they belong to (deleting a conversation keeps its audit trail).

Columns hold stable strings: each enum's value (``ToolStatus``, ``ApprovalDecision``, ``DecidedBy``,
``ErrorKind``, ``Risk``, ``Origin``), and '' where the record has none. Migration 2 added ``error_kind``,
``risk`` and ``hook``, and split the old ``decided_by='hook:NAME'`` rows into ``'hook'`` + ``hook=NAME``.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from weclaw_desktop.storage.db import Database, Migration, register_migrations
from weclaw_desktop.toolkit.audit import AuditRecord

COMPONENT = "audit"
_FIELDS = list(AuditRecord.model_fields)
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
    ],
)


def _column(value: Any) -> Any:
    if value is None:
        return ""
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
            tuple(_column(getattr(rec, f)) for f in _FIELDS),
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
    for name in _OPTIONAL:
        values[name] = values[name] or None
    return AuditRecord.model_validate(values)
