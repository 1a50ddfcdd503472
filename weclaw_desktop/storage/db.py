"""One SQLite file (``weclaw.db``, WAL) with append-only migrations per component.

Each component (history, memory, todo, reminders, companion, ...) owns its tables and registers its own
append-only list of migrations under its name, so components never edit each other's lists::

    register_migrations("todo", [
        Migration(1, "CREATE TABLE todo (id INTEGER PRIMARY KEY, text TEXT NOT NULL, done INTEGER DEFAULT 0)"),
    ])

``Database.open()`` applies whatever is pending for the components registered (imported) so far;
``ensure(component)`` applies one component's migrations (call it before first use). Never edit or
reorder a migration that has shipped: append a new one.

SQLite work is blocking: from async code call it through ``asyncio.to_thread`` (``Database.run``).
Connections are per thread (``check_same_thread`` stays on) and writes are serialised with a lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Migration:
    version: int
    sql: str


_MIGRATIONS: dict[str, list[Migration]] = {}


def register_migrations(component: str, migrations: list[Migration]) -> None:
    versions = [m.version for m in migrations]
    if versions != list(range(1, len(migrations) + 1)):
        raise ValueError(f"migrations of {component} must be numbered 1..n in order, got {versions}")
    _MIGRATIONS[component] = list(migrations)


class Database:
    """A SQLite database file. Thread-safe; one connection per thread."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._local = threading.local()
        self._write_lock = threading.RLock()
        self._applied: set[str] = set()
        self._all: list[sqlite3.Connection] = []

    @classmethod
    def open(cls, path: str | Path) -> Database:
        db = cls(path)
        db.path.parent.mkdir(parents=True, exist_ok=True)
        for component in list(_MIGRATIONS):
            db.ensure(component)
        return db

    def connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.conn = conn
            with self._write_lock:
                self._all.append(conn)
        return conn

    def ensure(self, component: str) -> None:
        """Apply the pending migrations of ``component`` (idempotent)."""
        if component in self._applied:
            return
        migrations = _MIGRATIONS.get(component)
        if migrations is None:
            raise KeyError(f"no migrations registered for '{component}' (import its module first)")
        with self.transaction() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_version (component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
            )
            row = conn.execute("SELECT version FROM schema_version WHERE component=?", (component,)).fetchone()
            current = row[0] if row else 0
            for m in migrations[current:]:
                for statement in _split(m.sql):
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_version(component, version) VALUES(?, ?) "
                    "ON CONFLICT(component) DO UPDATE SET version=excluded.version",
                    (component, m.version),
                )
        self._applied.add(component)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (BEGIN IMMEDIATE ... COMMIT), serialised across threads."""
        conn = self.connect()
        with self._write_lock:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def query(self, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()) -> list[sqlite3.Row]:
        return self.connect().execute(sql, params).fetchall()

    def execute(self, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()) -> int:
        """One write statement in its own transaction; returns lastrowid."""
        with self.transaction() as conn:
            cur = conn.execute(sql, params)
            return int(cur.lastrowid or 0)

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Run blocking database work off the event loop."""
        return await asyncio.to_thread(fn, *args)

    def close(self) -> None:
        with self._write_lock:
            for conn in self._all:
                with contextlib.suppress(sqlite3.ProgrammingError):  # made by a thread that ended
                    conn.close()
            self._all.clear()
        self._local = threading.local()


def _split(sql: str) -> list[str]:
    """Statements of a migration (sqlite3.complete_statement keeps triggers with ';' inside whole)."""
    statements: list[str] = []
    buf = ""
    for piece in sql.split(";"):
        buf += piece + ";"
        if sqlite3.complete_statement(buf):
            if buf.strip(" \n\t;"):
                statements.append(buf.strip())
            buf = ""
    if buf.strip(" \n\t;"):
        statements.append(buf.strip())
    return statements
