"""Storage faults as one exception with a kind and a sentence, instead of raw SQLite and OS errors.

:func:`storage_error` maps a :class:`sqlite3.Error` or :class:`OSError` raised while using a database file
to a :class:`StorageError` when it is a fault of the file or the disk (damaged, locked by someone else,
disk full, read-only, unreadable); anything else (a constraint, a bug in a statement) is returned as
``None`` and stays what it was. Front ends show :attr:`StorageError.message` (or :meth:`StorageError.text`,
which follows a live language switch; the sentences are the ``storage.*`` entries of the catalogue) and
never a traceback.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import sqlite3
import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from weclaw_desktop.i18n import Text


class Fault(StrEnum):
    CORRUPT = "corrupt"  # the file is not a database, or its pages are damaged
    LOCKED = "locked"  # another program holds a lock longer than the bounded wait
    FULL = "full"  # no space left (or the quota is used up)
    READONLY = "readonly"  # the file or its folder cannot be written
    IO = "io"  # the disk failed to read or write


# primary SQLite result codes (https://sqlite.org/rescode.html)
_SQLITE = {
    3: Fault.READONLY,  # SQLITE_PERM
    5: Fault.LOCKED,  # SQLITE_BUSY
    6: Fault.LOCKED,  # SQLITE_LOCKED
    8: Fault.READONLY,  # SQLITE_READONLY
    10: Fault.IO,  # SQLITE_IOERR
    11: Fault.CORRUPT,  # SQLITE_CORRUPT
    13: Fault.FULL,  # SQLITE_FULL
    14: Fault.READONLY,  # SQLITE_CANTOPEN
    26: Fault.CORRUPT,  # SQLITE_NOTADB
}
_ERRNO = {
    errno.ENOSPC: Fault.FULL,
    getattr(errno, "EDQUOT", -1): Fault.FULL,
    errno.EACCES: Fault.READONLY,
    errno.EPERM: Fault.READONLY,
    errno.EROFS: Fault.READONLY,
    errno.EIO: Fault.IO,
}
#: With less free space than this, an I/O error of SQLite is reported as a full disk (creating the WAL
#: index on a full disk fails as SQLITE_IOERR, not SQLITE_FULL).
NEARLY_FULL_BYTES = 256 * 1024


@dataclass(eq=False)
class StorageError(Exception):
    """A database file that cannot be used right now; :attr:`message` says why and what to do."""

    kind: Fault
    path: Path
    detail: str = ""
    holder: str = ""  # LOCKED: the program holding the lock, when it could be found
    waited_s: float = 0.0  # LOCKED: how long SQLite waited for the lock
    moved_to: Path | None = None  # CORRUPT: where the damaged file was kept

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message

    def text(self) -> Text:
        """The message as a catalogue text (rendered in the language of the moment; ``storage.*`` keys)."""
        where = str(self.path)
        if self.kind is Fault.LOCKED:
            waited = f"{self.waited_s:g}"
            if self.holder:
                return Text("storage.locked", path=where, holder=self.holder, waited=waited)
            return Text("storage.locked_unknown", path=where, waited=waited)
        if self.kind is Fault.CORRUPT and self.moved_to is not None:
            return Text("storage.corrupt_moved", name=self.path.name, detail=self.detail, moved_to=str(self.moved_to))
        detail = self.detail or {"readonly": "read-only", "io": "disk I/O error"}.get(self.kind.value, "")
        return Text(f"storage.{self.kind.value}", path=where, detail=detail)

    @property
    def message(self) -> str:
        return str(self.text())


def storage_error(exc: BaseException, path: Path, *, waited_s: float = 0.0) -> StorageError | None:
    """The fault behind ``exc`` (raised while using ``path``), or None when it is not a storage fault."""
    if isinstance(exc, StorageError):
        return exc
    detail = str(exc).strip()
    kind: Fault | None = None
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        if isinstance(code, int):
            kind = _SQLITE.get(code & 0xFF)
        elif "database is locked" in detail:  # sqlite3 without error codes (never on 3.11+)
            kind = Fault.LOCKED
    elif isinstance(exc, OSError):
        kind = _ERRNO.get(exc.errno or 0)
        detail = exc.strerror or detail
    if kind is None:
        return None
    if kind is Fault.IO and nearly_full(path):
        kind = Fault.FULL
    if kind is Fault.LOCKED:
        return StorageError(kind, path, detail, holder=lock_holder(path), waited_s=waited_s)
    return StorageError(kind, path, detail)


def nearly_full(path: Path) -> bool:
    folder = path if path.is_dir() else path.parent
    try:
        return shutil.disk_usage(folder).free < NEARLY_FULL_BYTES
    except OSError:
        return False


def lock_holder(path: Path) -> str:
    """'name, pid N' of another process holding a POSIX lock on ``path`` or its WAL files (Linux), or ''."""
    if not sys.platform.startswith("linux"):
        return ""
    inodes: set[int] = set()
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(OSError):
            inodes.add(os.stat(f"{path}{suffix}").st_ino)
    try:
        lines = Path("/proc/locks").read_text(encoding="ascii", errors="replace").splitlines()
    except OSError:
        return ""
    me = os.getpid()
    for line in lines:
        fields = line.split()
        # "1: POSIX  ADVISORY  WRITE 12345 08:01:1234567 0 EOF" (blocked waiters have "->" after the index)
        if "->" in fields:
            continue
        try:
            pid, inode = int(fields[4]), int(fields[5].rsplit(":", 1)[1])
        except (IndexError, ValueError):
            continue
        if inode in inodes and pid != me:
            return f"{_process_name(pid)}, pid {pid}"
    return ""


def _process_name(pid: int) -> str:
    try:
        import psutil

        return str(psutil.Process(pid).name())
    except Exception:  # gone, or not allowed to look
        return "process"
