"""Named locks between processes that die with their holder: one byte of a lock file per name.

``weclaw.db`` is shared by the app, ``weclaw chat`` processes and the reminder scheduler. Some things must
have one owner at a time across all of them (a conversation's turn: one writer per session). A
:class:`NamedLocks` maps each name to one byte of a small lock file (``weclaw.db-locks``) and takes an
OS record lock on it: ``fcntl.lockf`` on POSIX, ``msvcrt.locking`` on Windows. The OS drops the lock when
the holder exits, also on ``kill -9``, so a crash never leaves a stale lock and nothing has to be
cleaned up; one file serves every name, so nothing accumulates.

Within one process a name is held at most once too (POSIX record locks do not exclude the process that
holds them), and the file is opened once per process and never closed while a lock is held (closing any
descriptor of the file would drop the process's POSIX locks on it).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sys
import threading
from pathlib import Path

log = logging.getLogger("weclaw.storage.locks")

_SLOTS = 2**31 - 2  # byte offsets below 2**31: msvcrt.locking works with 32-bit file positions


def lock_file_for(database: Path) -> Path:
    return database.with_name(database.name + "-locks")


def _offset(name: str) -> int:
    digest = hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return 1 + int.from_bytes(digest, "big") % _SLOTS


class _LockFile:
    """The process's one descriptor of a lock file and the names it holds there."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd: int | None = None
        self.held: set[str] = set()
        self.mutex = threading.Lock()

    def _open(self) -> int:
        if self.fd is None:
            flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOINHERIT", 0)
            self.fd = os.open(self.path, flags, 0o600)
            if hasattr(os, "set_inheritable"):
                os.set_inheritable(self.fd, False)
        return self.fd

    def try_lock(self, name: str) -> bool:
        with self.mutex:
            if name in self.held:
                return False
            fd = self._open()
            if not _lock(fd, _offset(name)):
                return False
            self.held.add(name)
            return True

    def unlock(self, name: str) -> None:
        with self.mutex:
            if name not in self.held or self.fd is None:
                return
            self.held.discard(name)
            _unlock(self.fd, _offset(name))

    def free_elsewhere(self, name: str) -> bool:
        """True when no process (this one included) holds ``name``: a probe that takes and drops it."""
        if self.try_lock(name):
            self.unlock(name)
            return True
        return False


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _lock(fd: int, offset: int) -> bool:
        os.lseek(fd, offset, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int, offset: int) -> None:
        os.lseek(fd, offset, os.SEEK_SET)
        with contextlib.suppress(OSError):
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(fd: int, offset: int) -> bool:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset, os.SEEK_SET)
        except OSError:
            return False
        return True

    def _unlock(fd: int, offset: int) -> None:
        with contextlib.suppress(OSError):
            fcntl.lockf(fd, fcntl.LOCK_UN, 1, offset, os.SEEK_SET)


_files: dict[Path, _LockFile] = {}
_files_mutex = threading.Lock()


class NamedLocks:
    """Cross-process, crash-safe locks by name, in ``path`` (see the module docstring).

    When the lock file cannot be created (a read-only or full disk), :meth:`acquire` returns True
    without a lock and logs it once: the database writes that the lock protects fail on such a disk
    anyway, with their own message.
    """

    def __init__(self, path: Path) -> None:
        key = Path(os.path.abspath(path))
        with _files_mutex:
            self._file = _files.setdefault(key, _LockFile(key))
        self._warned = False

    @property
    def path(self) -> Path:
        return self._file.path

    def acquire(self, name: str) -> bool:
        """Take ``name`` without waiting; False when another process (or another owner here) holds it."""
        try:
            return self._file.try_lock(name)
        except OSError as exc:
            if not self._warned:
                log.warning("cannot use the lock file %s (%s); continuing without it", self.path, exc)
                self._warned = True
            return True

    def release(self, name: str) -> None:
        self._file.unlock(name)

    def held_here(self, name: str) -> bool:
        return name in self._file.held

    def is_free(self, name: str) -> bool:
        """True when nobody holds ``name`` right now (not even this process)."""
        if self.held_here(name):
            return False
        try:
            return self._file.free_elsewhere(name)
        except OSError:
            return True
