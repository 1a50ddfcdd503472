"""Transfers in the shape of LocalSend (offer or prepare -> per-file keys -> records -> acknowledge or cancel).

Outgoing (desktop -> phone): the desktop offers files by id, each with its own key; the phone downloads
sealed records (resuming at the first record it lacks) and reports "ready" (it holds the whole file,
every record authenticated) and "saved" (the browser's save was started by the user's tap). Incoming (phone
-> desktop): the phone declares files, gets a key per file, uploads sealed records that are checked and
written at their place; the finished file is renamed into the incoming folder. Paths are only ever known
to the desktop; the phone sees ids. The state lives in memory and in SQLite (:mod:`.transfer_store`).
"""

from __future__ import annotations

import asyncio
import hashlib
import mimetypes
import os
import re
import secrets
import shutil
import time
import unicodedata
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from weclaw_desktop.companion.crypto import RECORD, b64e, record_count

OFFER_TTL_S = 7 * 24 * 3600.0  # an offer waits this long on the phone page
UPLOAD_IDLE_S = 6 * 3600.0  # an upload with no progress for this long is dropped (its reservation freed)
ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
SHA_PATTERN = re.compile(r"^[0-9a-f]{64}$")
_WINDOWS_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)), *(f"LPT{i}" for i in range(1, 10))}


class FileState(StrEnum):
    QUEUED = "queued"  # offered (or declared), nothing moved yet
    SENDING = "sending"  # records are moving
    READY = "ready"  # the phone holds the whole authenticated file; its save waits for the user's tap
    DELIVERED = "delivered"  # outgoing: held and the save started on the phone; incoming: saved on the desktop
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def final(self) -> bool:
        return self in (FileState.DELIVERED, FileState.FAILED, FileState.CANCELLED)


def new_id() -> str:
    return uuid.uuid4().hex[:16]


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    """SHA-256 of a file, read in chunks (blocking)."""
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def guess_mime(name: str) -> str:
    return mimetypes.guess_type(name)[0] or "application/octet-stream"


def safe_name(name: str, fallback: str = "file") -> str:
    """A file name the phone sent, made safe for any OS: no folders, control characters or reserved names."""
    name = unicodedata.normalize("NFC", str(name)).replace("\\", "/").split("/")[-1]
    name = "".join(c for c in name if c.isprintable() and c not in '<>:"|?*')
    name = name.strip().strip(".").strip()
    if not name:
        name = fallback
    stem, dot, ext = name.rpartition(".")
    if (stem if dot else name).upper() in _WINDOWS_RESERVED:
        name = "_" + name
    if len(name.encode("utf-8")) > 200:
        ext = ("." + ext) if dot and len(ext) <= 16 else ""
        base = name[: len(name) - len(ext)] if ext else name
        while len((base + ext).encode("utf-8")) > 200:
            base = base[:-1]
        name = base + ext
    return name


def unique_destination(folder: Path, name: str) -> Path:
    """``folder/name``, or ``name (2).ext`` and so on when taken."""
    target = folder / name
    if not target.exists():
        return target
    stem, suffix = Path(name).stem, Path(name).suffix
    for i in range(2, 10_000):
        candidate = folder / f"{stem} ({i}){suffix}"
        if not candidate.exists():
            return candidate
    return folder / f"{stem}-{secrets.token_hex(4)}{suffix}"


# --- outgoing -------------------------------------------------------------------------------------


@dataclass
class OutgoingFile:
    id: str
    seq: int
    path: Path
    name: str
    size: int
    sha256: str
    mime: str
    mtime_ns: int
    key_salt: bytes = field(default_factory=lambda: secrets.token_bytes(16))
    state: FileState = FileState.QUEUED
    served: int = 0  # records streamed so far (progress; resumed ranges may repeat)
    error: str = ""
    done: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def records(self) -> int:
        return record_count(self.size)

    def public(self, key: bytes) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "size": self.size,
            "mime": self.mime,
            "records": self.records,
            "key": b64e(key),
            "state": self.state.value,
        }

    def finish(self, state: FileState, error: str = "") -> None:
        self.state = state
        self.error = error
        self.done.set()


@dataclass
class OutgoingTransfer:
    """Files offered to one device. ``wait`` returns when every file has settled or the time is up."""

    id: str
    device_id: str
    files: dict[str, OutgoingFile]
    created_at: float = field(default_factory=time.time)
    cancelled: bool = False

    def expired(self, now: float) -> bool:
        return now - self.created_at > OFFER_TTL_S

    def pending(self, now: float) -> bool:
        return not self.cancelled and not self.expired(now) and any(not f.state.final for f in self.files.values())

    def count(self, *states: FileState) -> int:
        return sum(1 for f in self.files.values() if f.state in states)

    async def wait(
        self,
        within: float,
        on_progress: Callable[[OutgoingTransfer], None] | None = None,
        *,
        settled: frozenset[FileState] = frozenset({FileState.DELIVERED, FileState.FAILED, FileState.CANCELLED}),
    ) -> bool:
        """Wait until every file is in ``settled`` (default: final); True if that happened in time."""
        deadline = time.monotonic() + within
        while True:
            if all(f.state in settled for f in self.files.values()):
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if on_progress is not None:
                on_progress(self)
            for f in self.files.values():
                if f.state not in settled:
                    f.done.clear()
            waiters = [asyncio.ensure_future(f.done.wait()) for f in self.files.values() if f.state not in settled]
            try:
                await asyncio.wait(waiters, timeout=min(left, 0.5), return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waiters:
                    w.cancel()

    def progress(self) -> tuple[int, int]:
        total = sum(f.size for f in self.files.values())
        done = sum(
            f.size if f.state in (FileState.READY, FileState.DELIVERED) else min(f.served * RECORD, f.size)
            for f in self.files.values()
        )
        return done, total


def describe_file(path: Path, seq: int = 0) -> OutgoingFile:
    """Stat and hash a file to offer (blocking: run in a thread)."""
    st = path.stat()
    return OutgoingFile(
        id=new_id(),
        seq=seq,
        path=path,
        name=path.name,
        size=st.st_size,
        sha256=sha256_file(path),
        mime=guess_mime(path.name),
        mtime_ns=st.st_mtime_ns,
    )


# --- incoming -------------------------------------------------------------------------------------


@dataclass
class IncomingFile:
    id: str
    seq: int
    name: str
    size: int
    mime: str
    key_salt: bytes = field(default_factory=lambda: secrets.token_bytes(16))
    received: int = 0  # records written (contiguous from record 0)
    part: Path | None = None
    state: FileState = FileState.QUEUED
    saved_as: Path | None = None
    sha256: str = ""  # of what the desktop saved
    error: str = ""
    busy: bool = False

    @property
    def records(self) -> int:
        return record_count(self.size)

    @property
    def received_bytes(self) -> int:
        return min(self.size, self.received * RECORD)


@dataclass
class IncomingSession:
    id: str
    device_id: str
    files: dict[str, IncomingFile]
    created_at: float = field(default_factory=time.time)
    last_activity: float = field(default_factory=time.time)
    cancelled: bool = False

    def idle(self, now: float) -> bool:
        return now - self.last_activity > UPLOAD_IDLE_S

    @property
    def unsent_bytes(self) -> int:
        """Declared but not yet received: what this upload holds in reserve."""
        return sum(f.size - f.received_bytes for f in self.files.values() if not f.state.final)

    @property
    def partial_bytes(self) -> int:
        return sum(f.received_bytes for f in self.files.values() if not f.state.final)


def partial_dir(incoming: Path) -> Path:
    """Where uploads are written before their check: inside the incoming folder (same disk, atomic rename)."""
    return incoming / ".weclaw-partial"


def clean_partials(incoming: Path, keep: set[Path] | frozenset[Path] = frozenset()) -> int:
    """Delete partial uploads that no persisted upload owns (left by a crash). Returns how many went."""
    folder = partial_dir(incoming)
    if not folder.is_dir():
        return 0
    removed = 0
    for p in folder.iterdir():
        try:
            if p.is_file() and p not in keep:
                p.unlink()
                removed += 1
        except OSError:
            continue
    return removed


def free_bytes(folder: Path) -> int:
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return shutil.disk_usage(probe).free


def new_partial(incoming: Path) -> Path:
    """An empty, private file for one upload, inside the incoming folder (blocking)."""
    folder = partial_dir(incoming)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{new_id()}.part"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
    os.close(fd)
    return path


def write_at(path: Path, offset: int, chunks: list[bytes]) -> None:
    """Write ``chunks`` at ``offset`` and drop anything after them (a resumed upload rewrites the tail)."""
    with path.open("r+b") as fh:
        fh.seek(offset)
        for c in chunks:
            fh.write(c)
        fh.truncate()


def commit_upload(part: Path, incoming: Path, name: str) -> tuple[Path, str]:
    """fsync, hash, and move into the incoming folder without overwriting anything: (destination, SHA-256)."""
    with part.open("rb") as fh:
        sha = hashlib.file_digest(fh, "sha256").hexdigest()
        os.fsync(fh.fileno())
    for _ in range(20):
        dest = unique_destination(incoming, name)
        try:
            os.link(part, dest)  # fails if dest appeared meanwhile: never overwrites
        except FileExistsError:
            continue
        except OSError:  # file systems without hard links (FAT): rename
            os.replace(part, dest)
            return dest, sha
        part.unlink()
        return dest, sha
    raise OSError("could not find a free name in the incoming folder")
