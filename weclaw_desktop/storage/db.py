"""One SQLite file (``weclaw.db``, WAL) with append-only migrations per component; the one place for SQLite.

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

Every SQLite file of the app is used through this class, so faults are handled here once
(``storage/faults.py``): a fault of the file or the disk raises :class:`StorageError` with a sentence for
the user, never a raw ``sqlite3`` error:

- damaged: ``open()`` checks the header (not a database, truncated) and a marker left when damage was
  seen at run time; a damaged file is moved to ``damaged/`` beside it (kept, with its WAL) and a fresh
  database is created; :attr:`Database.recovered` says so (front ends show it as a notice);
- locked by another program: SQLite waits ``busy_timeout_s`` (5 s), then the error names the file and,
  on Linux, the program holding it;
- disk full, read-only, I/O errors: the statement fails cleanly; the connection stays usable, so the next
  write works once space is free.

Text bound to a statement is made valid UTF-8 (lone surrogates become U+FFFD) and text read back never
fails to decode, so odd bytes cannot break a write or a read.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import struct
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from weclaw_desktop.storage.faults import Fault, StorageError, storage_error
from weclaw_desktop.textsafe import clean_text

T = TypeVar("T")

#: How long a statement waits for a lock another process holds before it fails with a message.
BUSY_TIMEOUT_S = 5.0
DAMAGED_DIR = "damaged"
MARKER_SUFFIX = ".damaged"  # "weclaw.db.damaged": damage was seen while running; check at the next open
_MAGIC = b"SQLite format 3\x00"


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


def _clean(params: Any) -> Any:
    if isinstance(params, dict):
        return {k: clean_text(v) if isinstance(v, str) else v for k, v in params.items()}
    if isinstance(params, list | tuple):
        return tuple(clean_text(v) if isinstance(v, str) else v for v in params)
    return params


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


class _Cursor(sqlite3.Cursor):
    def execute(self, sql: str, parameters: Any = (), /) -> _Cursor:
        super().execute(sql, _clean(parameters))
        return self

    def executemany(self, sql: str, seq_of_parameters: Iterable[Any], /) -> _Cursor:
        super().executemany(sql, (_clean(p) for p in seq_of_parameters))
        return self


class _Connection(sqlite3.Connection):
    """A connection whose statements bind only valid UTF-8 text."""

    def cursor(self, factory: Any = None) -> Any:
        return super().cursor(factory or _Cursor)

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        return super().execute(sql, _clean(parameters))

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        return super().executemany(sql, (_clean(p) for p in parameters))


class Database:
    """A SQLite database file. Thread-safe; one connection per thread."""

    def __init__(self, path: str | Path, *, busy_timeout_s: float = BUSY_TIMEOUT_S) -> None:
        self.path = Path(path)
        self.busy_timeout_s = busy_timeout_s
        self.recovered: StorageError | None = None  # set by open() when a damaged file was moved aside
        self._local = threading.local()
        self._write_lock = threading.RLock()
        self._applied: set[str] = set()
        self._all: list[sqlite3.Connection] = []

    @classmethod
    def open(cls, path: str | Path, *, busy_timeout_s: float = BUSY_TIMEOUT_S) -> Database:
        """Open (or create) the file and apply pending migrations; a damaged file is moved aside first."""
        db = cls(path, busy_timeout_s=busy_timeout_s)
        db._prepare()
        return db

    def _prepare(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise self._fault(exc) or exc from exc
        reason = damage_found(self.path)
        if reason is None:
            try:
                self._migrate_all()
                return
            except StorageError as exc:
                if exc.kind is not Fault.CORRUPT:
                    raise
                reason = exc.detail
        self.close()
        moved = move_aside(self.path, reason)
        self.recovered = StorageError(Fault.CORRUPT, self.path, reason, moved_to=moved)
        self._applied.clear()
        self._migrate_all()

    def _migrate_all(self) -> None:
        for component in list(_MIGRATIONS):
            self.ensure(component)

    def _fault(self, exc: BaseException) -> StorageError | None:
        """The StorageError for ``exc`` (None: not a fault of the file); damage leaves a marker for open()."""
        fault = storage_error(exc, self.path, waited_s=self.busy_timeout_s)
        if fault is not None and fault.kind is Fault.CORRUPT:
            with contextlib.suppress(OSError):
                marker(self.path).write_text(fault.detail, encoding="utf-8")
        return fault

    @contextmanager
    def _mapped(self) -> Iterator[None]:
        try:
            yield
        except (sqlite3.Error, OSError) as exc:
            fault = self._fault(exc)
            if fault is None:
                raise
            raise fault from exc

    def connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            with self._mapped():
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(
                    self.path, timeout=self.busy_timeout_s, isolation_level=None, factory=_Connection
                )
                try:
                    conn.row_factory = sqlite3.Row
                    conn.text_factory = _decode
                    conn.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_s * 1000)}")
                    conn.execute("PRAGMA journal_mode=WAL")
                    conn.execute("PRAGMA synchronous=NORMAL")
                    conn.execute("PRAGMA foreign_keys=ON")
                except BaseException:
                    conn.close()
                    raise
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
        """A write transaction (BEGIN IMMEDIATE ... COMMIT), serialised across threads.

        A storage fault anywhere inside (the statements of the block included) rolls back and raises
        :class:`StorageError`; other errors roll back and propagate unchanged.
        """
        conn = self.connect()
        with self._write_lock:
            with self._mapped():
                conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException as exc:
                with contextlib.suppress(sqlite3.Error):  # SQLite may have rolled back already (disk full)
                    conn.execute("ROLLBACK")
                fault = self._fault(exc) if isinstance(exc, sqlite3.Error | OSError) else None
                if fault is None:
                    raise
                raise fault from exc
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise self._fault(exc) or exc from exc

    def query(self, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()) -> list[sqlite3.Row]:
        with self._mapped():
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


# --- damage -------------------------------------------------------------------------------------------
def marker(path: Path) -> Path:
    return path.with_name(path.name + MARKER_SUFFIX)


def damage_found(path: Path) -> str | None:
    """Why ``path`` cannot be a healthy database (cheap header checks), or None.

    A marker left at run time triggers a full ``PRAGMA quick_check``; a clean result removes the marker.
    """
    try:
        size = path.stat().st_size
    except OSError:
        return None  # missing (a new database), or unreadable: the connection reports that fault
    if size == 0:
        return None
    try:
        with open(path, "rb") as fh:
            header = fh.read(100)
    except OSError:
        return None
    if len(header) < 100 or not header.startswith(_MAGIC):
        return "file is not a database"
    page_size = struct.unpack(">H", header[16:18])[0]
    page_size = 65536 if page_size == 1 else page_size
    change_counter, pages = struct.unpack(">II", header[24:32])
    valid_for = struct.unpack(">I", header[92:96])[0]
    wal = Path(f"{path}-wal")
    wal_size = wal.stat().st_size if wal.exists() else 0
    # With a WAL to replay, the file may legitimately be short (a checkpoint stopped half-way).
    if valid_for == change_counter and pages and wal_size == 0 and size < pages * page_size:
        return f"truncated: {size:,} of {pages * page_size:,} bytes"
    mark = marker(path)
    if mark.exists():
        problem = _quick_check(path)
        if problem is None:
            with contextlib.suppress(OSError):
                mark.unlink()
        return problem
    return None


def _quick_check(path: Path) -> str | None:
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S)
        try:
            rows = conn.execute("PRAGMA quick_check(5)").fetchall()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        fault = storage_error(exc, path)
        return str(exc) if fault is not None and fault.kind is Fault.CORRUPT else None
    results = [str(r[0]) for r in rows]
    return None if results == ["ok"] else "; ".join(results)[:300]


def move_aside(path: Path, reason: str) -> Path:
    """Keep a damaged database (and its WAL) in ``damaged/`` beside it; returns where it went."""
    folder = path.parent / DAMAGED_DIR
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = folder / f"{path.stem}-{stamp}{path.suffix}"
    n = 1
    while target.exists():
        n += 1
        target = folder / f"{path.stem}-{stamp}-{n}{path.suffix}"
    try:
        folder.mkdir(exist_ok=True)
        os.replace(path, target)
        for suffix in ("-wal", "-shm", "-journal"):
            side = Path(f"{path}{suffix}")
            if side.exists():
                os.replace(side, Path(f"{target}{suffix}"))
    except OSError as exc:
        raise StorageError(
            Fault.CORRUPT, path, f"{reason}; it could not be moved aside: {exc.strerror or exc}"
        ) from exc
    with contextlib.suppress(OSError):
        marker(path).unlink()
    return target


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
