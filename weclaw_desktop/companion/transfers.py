"""Transfer sessions in the shape of LocalSend: prepare -> a token per file -> download/upload -> cancel.

Outgoing (desktop -> phone): the desktop offers files by id; the phone downloads them with HTTP Range and
acknowledges each with the SHA-256 it computed. Incoming (phone -> desktop): the phone declares files, gets a
token per file, uploads raw bodies that are checked and renamed into the incoming folder. Paths are only
ever known to the desktop; the phone sees ids.
"""

from __future__ import annotations

import asyncio
import hashlib
import mimetypes
import os
import re
import secrets
import time
import unicodedata
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

OFFER_TTL_S = 6 * 3600.0
UPLOAD_SESSION_TTL_S = 3600.0
ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
SHA_PATTERN = re.compile(r"^[0-9a-f]{64}$")
_WINDOWS_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)), *(f"LPT{i}" for i in range(1, 10))}


class FileState(StrEnum):
    QUEUED = "queued"  # offered, waiting for the phone
    SENDING = "sending"  # the phone is downloading
    SENT = "sent"  # every byte was streamed, the phone has not confirmed (browser-managed download)
    DELIVERED = "delivered"  # the phone confirmed the SHA-256
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
    path: Path
    name: str
    size: int
    sha256: str
    mime: str
    mtime_ns: int
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    state: FileState = FileState.QUEUED
    served: int = 0  # bytes streamed so far (progress; ranges may repeat after a resume)
    phone_sha256: str = ""
    error: str = ""
    done: asyncio.Event = field(default_factory=asyncio.Event)

    def public(self, *, with_token: bool) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "size": self.size,
            "sha256": self.sha256,
            "mime": self.mime,
            "state": self.state.value,
        }
        if with_token:
            out["token"] = self.token
        return out

    @property
    def settled(self) -> bool:
        """Nothing more will happen: final, or streamed whole to a browser that cannot confirm it."""
        return self.state.final or self.state is FileState.SENT

    def finish(self, state: FileState, error: str = "") -> None:
        self.state = state
        self.error = error
        self.done.set()


@dataclass
class OutgoingTransfer:
    """Files offered to one device. ``wait`` returns when every file is final or the time is up."""

    id: str
    device_id: str
    files: dict[str, OutgoingFile]
    created_at: float = field(default_factory=time.time)
    cancelled: bool = False

    @property
    def expired(self) -> bool:
        return time.time() - self.created_at > OFFER_TTL_S

    @property
    def pending(self) -> bool:
        return not self.cancelled and not self.expired and any(not f.state.final for f in self.files.values())

    def public(self) -> dict[str, Any]:
        return {
            "session": self.id,
            "created_at": self.created_at,
            "files": [f.public(with_token=True) for f in self.files.values()],
        }

    async def wait(self, within: float, on_progress: Callable[[OutgoingTransfer], None] | None = None) -> bool:
        """Wait until every file is delivered, failed, cancelled or sent unverified; True if in time."""
        deadline = time.monotonic() + within
        while True:
            if all(f.settled for f in self.files.values()):
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if on_progress is not None:
                on_progress(self)
            waiters = [asyncio.ensure_future(f.done.wait()) for f in self.files.values() if not f.settled]
            try:
                await asyncio.wait(waiters, timeout=min(left, 0.5), return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waiters:
                    w.cancel()

    def progress(self) -> tuple[int, int]:
        total = sum(f.size for f in self.files.values())
        done = sum(
            f.size if f.state in (FileState.DELIVERED, FileState.SENT) else min(f.served, f.size)
            for f in self.files.values()
        )
        return done, total


def describe_file(path: Path) -> OutgoingFile:
    """Stat and hash a file to offer (blocking: run in a thread)."""
    st = path.stat()
    return OutgoingFile(
        id=new_id(),
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
    name: str
    size: int
    sha256: str  # what the phone declared ('' = not declared; the desktop's own hash is reported)
    mime: str
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    state: FileState = FileState.QUEUED
    saved_as: Path | None = None
    received_sha256: str = ""
    busy: bool = False


@dataclass
class IncomingSession:
    id: str
    device_id: str
    files: dict[str, IncomingFile]
    created_at: float = field(default_factory=time.time)
    cancelled: bool = False

    @property
    def expired(self) -> bool:
        return time.time() - self.created_at > UPLOAD_SESSION_TTL_S

    @property
    def reserved_bytes(self) -> int:
        return sum(f.size for f in self.files.values() if not f.state.final)


def partial_dir(incoming: Path) -> Path:
    """Where uploads are written before their check: inside the incoming folder (same disk, atomic rename)."""
    return incoming / ".weclaw-partial"


def clean_partials(incoming: Path, older_than_s: float = 0.0) -> int:
    """Delete leftover partial uploads (after a crash). Returns how many were removed."""
    folder = partial_dir(incoming)
    if not folder.is_dir():
        return 0
    removed = 0
    now = time.time()
    for p in folder.iterdir():
        try:
            if p.is_file() and now - p.stat().st_mtime >= older_than_s:
                p.unlink()
                removed += 1
        except OSError:
            continue
    return removed


def free_bytes(folder: Path) -> int:
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    import shutil

    return shutil.disk_usage(probe).free


def open_partial(incoming: Path) -> tuple[Path, int]:
    folder = partial_dir(incoming)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{new_id()}.part"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
    return path, fd
