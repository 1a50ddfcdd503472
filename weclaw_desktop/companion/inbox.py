"""Phone -> desktop: declared uploads, the reservation and quota rules, records written at their place,
and the finished file moved into the incoming folder. Persisted, so an upload resumes after a restart at the
first record the desktop lacks (the partial file is kept; anything past the recorded records is cut off).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from weclaw_desktop.companion import wire
from weclaw_desktop.companion.crypto import RECORD, b64e
from weclaw_desktop.companion.events import EventKind
from weclaw_desktop.companion.keys import MasterKey
from weclaw_desktop.companion.lane import Emit, Push, TransferLane
from weclaw_desktop.companion.limits import Limits
from weclaw_desktop.companion.problems import Problem
from weclaw_desktop.companion.transfer_store import TransferStore
from weclaw_desktop.companion.transfers import (
    FileState,
    IncomingFile,
    IncomingSession,
    clean_partials,
    commit_upload,
    free_bytes,
    guess_mime,
    new_id,
    new_partial,
    safe_name,
    write_at,
)

log = logging.getLogger("weclaw.companion")

DISK_RESERVE = 256 << 20  # never fill the disk to the last byte
DAY_S = 24 * 3600.0


class Inbox(TransferLane):
    def __init__(
        self,
        master: MasterKey,
        clock: Callable[[], float],
        emit: Emit,
        push: Push,
        incoming_dir: Callable[[], Path],
        max_upload: Callable[[], int],
        limits: Limits,
    ) -> None:
        super().__init__(master, clock, emit, push)
        self.incoming_dir = incoming_dir
        self.limits = limits
        self.max_upload = max_upload
        self.uploads: dict[str, IncomingSession] = {}

    async def load(self, store: TransferStore, *, lost: bool) -> None:
        self._store = store
        keep: set[Path] = set()
        for s in await asyncio.to_thread(store.load_uploads):
            if lost or s.idle(self.clock()):
                for f in s.files.values():
                    if not f.state.final:
                        f.state, f.error = FileState.FAILED, "the upload was interrupted for too long"
                        await asyncio.to_thread(store.update_upload_file, s, f, self.clock())
                continue
            for f in s.files.values():
                if f.part is not None and not f.state.final:
                    if await asyncio.to_thread(_cut_to, f.part, f.received_bytes):
                        keep.add(f.part)
                    else:  # the partial file is gone: start this file again
                        f.part, f.received = None, 0
            self.uploads[s.id] = s
        await asyncio.to_thread(clean_partials, self.incoming_dir(), keep)

    def file_key(self, s: IncomingSession, f: IncomingFile) -> bytes:
        return self.master.file_key("up", s.id, f.id, f.key_salt)

    def public_uploads(self, device_id: str) -> list[dict[str, Any]]:
        return [self.status(device_id, s.id) for s in self.uploads.values() if s.device_id == device_id]

    # --- declaring ------------------------------------------------------------------------------
    async def prepare(self, device_id: str, body: dict[str, Any]) -> dict[str, Any]:
        for idle in [s for s in self.uploads.values() if s.idle(self.clock())]:  # abandoned: free its reservation
            self.uploads.pop(idle.id, None)
            self._drop(idle, "the upload was interrupted for too long")
        items = body.get("files")
        if not isinstance(items, list) or not items:
            raise Problem("bad_request", "files must be a non-empty list.")
        if len(items) > self.limits.max_files_per_upload:
            raise Problem("too_many", f"At most {self.limits.max_files_per_upload} files at a time.")
        files: dict[str, IncomingFile] = {}
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise Problem("bad_request", "Each file must be an object.")
            fid = wire.ident(item, "id")
            if fid in files:
                raise Problem("bad_id", "File ids must be unique.")
            size = wire.whole(item, "size")
            name = safe_name(wire.text(item, "name", limit=500, required=False), fid)
            if size > self.max_upload():
                raise Problem(
                    "too_large", f"{name} is larger than the limit of {self.max_upload() >> 20} MB.", file=fid
                )
            mime = wire.text(item, "mime", limit=100, required=False) or guess_mime(name)
            files[fid] = IncomingFile(id=fid, seq=i, name=name, size=size, mime=mime)
        total = sum(f.size for f in files.values())
        mine = [s for s in self.uploads.values() if s.device_id == device_id]
        unsent = sum(s.unsent_bytes for s in mine)
        if unsent + total > self.limits.reserve_bytes:
            raise Problem(
                "reserve",
                "This phone has too much announced but not yet sent. Finish or cancel the other uploads first.",
            )
        now = self.clock()
        saved_today = await asyncio.to_thread(self.store.received_since, device_id, now - DAY_S)
        if saved_today + sum(s.partial_bytes for s in mine) + unsent + total > self.limits.daily_bytes:
            raise Problem("quota", "This phone reached today's limit of data it may send to this desktop.")
        reserved = sum(s.unsent_bytes for s in self.uploads.values())
        free = await asyncio.to_thread(free_bytes, self.incoming_dir())
        if total + reserved + DISK_RESERVE > free:
            raise Problem("no_space", "The desktop does not have enough free disk space for these files.")
        session = IncomingSession(id=new_id(), device_id=device_id, files=files, created_at=now, last_activity=now)
        await asyncio.to_thread(self.store.add_upload, session, now)
        self.uploads[session.id] = session
        return {"upload": session.id, "files": {f.id: b64e(self.file_key(session, f)) for f in files.values()}}

    def status(self, device_id: str, upload_id: str) -> dict[str, Any]:
        s = self.uploads.get(upload_id)
        if s is None or s.device_id != device_id:
            raise Problem("not_found", "No such upload.")
        return {
            "upload": s.id,
            "files": {
                f.id: {"received": f.received, "records": f.records, "state": f.state.value, "name": f.name}
                for f in s.files.values()
            },
        }

    # --- records --------------------------------------------------------------------------------
    def target(self, device_id: str, upload_id: str, file_id: str, first: int) -> tuple[IncomingSession, IncomingFile]:
        s = self.uploads.get(upload_id)
        f = s.files.get(file_id) if s is not None and s.device_id == device_id else None
        if s is None or f is None:
            raise Problem("not_found", "No such upload.")
        if s.cancelled or f.state is FileState.CANCELLED:
            raise Problem("cancelled", "This upload was cancelled.")
        if f.state.final:
            raise Problem("finished", "This file is already done.", state=f.state.value)
        if f.busy:
            raise Problem("order", "This file is being uploaded on another connection.", received=f.received)
        if first != f.received:
            raise Problem("order", f"The desktop has {f.received} records of this file.", received=f.received)
        return s, f

    async def write(self, s: IncomingSession, f: IncomingFile, plaintexts: list[bytes]) -> None:
        """Write the next records (already authenticated) and record how many the desktop now has."""
        if f.part is None:
            f.part = await asyncio.to_thread(new_partial, self.incoming_dir())
        await asyncio.to_thread(write_at, f.part, f.received * RECORD, plaintexts)
        f.received += len(plaintexts)
        f.state = FileState.SENDING
        s.last_activity = self.clock()
        await asyncio.to_thread(self.store.update_upload_file, s, f, self.clock())

    async def finish(self, s: IncomingSession, f: IncomingFile, device_name: str) -> dict[str, Any]:
        if f.part is None:  # an empty file: one empty record, nothing written yet
            f.part = await asyncio.to_thread(new_partial, self.incoming_dir())
        dest, sha = await asyncio.to_thread(commit_upload, f.part, self.incoming_dir(), f.name)
        f.saved_as, f.sha256, f.state, f.part = dest, sha, FileState.DELIVERED, None
        await asyncio.to_thread(self.store.update_upload_file, s, f, self.clock())
        log.info("received %s (%d bytes) from %s", dest, f.size, s.device_id)
        self.emit(
            EventKind.FILE_RECEIVED,
            s.device_id,
            name=dest.name,
            path=str(dest),
            size=f.size,
            sha256=sha,
            verified=True,
            mime=f.mime,
        )
        if all(x.state.final for x in s.files.values()):
            self.uploads.pop(s.id, None)
        return {"file": f.id, "name": dest.name, "size": f.size, "sha256": sha, "done": True}

    async def fail(self, s: IncomingSession, f: IncomingFile, reason: str) -> None:
        self.emit(
            EventKind.TRANSFER_FAILED, s.device_id, session=s.id, file=f.id, name=f.name, reason=reason, direction="in"
        )

    # --- ending ---------------------------------------------------------------------------------
    def cancel(self, upload_id: str, reason: str) -> bool:
        s = self.uploads.pop(upload_id, None)
        if s is None:
            return False
        self._drop(s, reason)
        self.push(s.device_id, "upload_cancel", {"upload": s.id})
        return True

    def cancel_from_phone(self, device_id: str, upload_id: str) -> bool:
        s = self.uploads.get(upload_id)
        if s is None or s.device_id != device_id:
            return False
        self.uploads.pop(upload_id)
        self._drop(s, "cancelled on the phone")
        return True

    def cancel_device(self, device_id: str, reason: str) -> None:
        for s in [s for s in self.uploads.values() if s.device_id == device_id]:
            self.uploads.pop(s.id, None)
            self._drop(s, reason)

    def _drop(self, s: IncomingSession, reason: str) -> None:
        s.cancelled = True
        for f in s.files.values():
            if not f.state.final:
                f.state, f.error = FileState.CANCELLED, reason
            if f.part is not None and not f.busy:
                with contextlib.suppress(OSError):
                    f.part.unlink()
                f.part = None
        if self._store is not None:
            try:
                self._store.cancel_upload(s)
                for f in s.files.values():
                    self._store.update_upload_file(s, f, self.clock())
            except Exception:
                log.exception("could not record the cancelled upload %s", s.id)


def _cut_to(path: Path, size: int) -> bool:
    """After a crash: drop whatever was written past the records the database knows of (False: no file, or
    shorter than the records the database counts)."""
    try:
        with path.open("r+b") as fh:
            if fh.seek(0, 2) < size:
                return False
            fh.truncate(size)
    except OSError:
        return False
    return True
