"""Desktop -> phone: offers, their persistence, and what the phone reports back (ready / saved / failed).

"Delivered" is only ever set by the phone's authenticated "saved" report: it holds the complete file
(every record authenticated) and the browser's save was started by the user's tap. A file the phone holds
without a save is READY ("on the phone, tap to save"), and is reported as that.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from weclaw_desktop.companion.devices import Device
from weclaw_desktop.companion.events import EventKind
from weclaw_desktop.companion.keys import MasterKey
from weclaw_desktop.companion.lane import Emit, Push, TransferLane
from weclaw_desktop.companion.problems import Problem
from weclaw_desktop.companion.transfer_store import TransferStore
from weclaw_desktop.companion.transfers import FileState, OutgoingFile, OutgoingTransfer, describe_file, new_id

log = logging.getLogger("weclaw.companion")

DeviceLookup = Callable[[str], Awaitable[Device | None]]
PERSIST_EVERY = 64  # records between two progress writes to the database
ACK_STATES = {"ready": FileState.READY, "saved": FileState.DELIVERED, "failed": FileState.FAILED}


class Outbox(TransferLane):
    def __init__(
        self, master: MasterKey, clock: Callable[[], float], emit: Emit, push: Push, device: DeviceLookup
    ) -> None:
        super().__init__(master, clock, emit, push)
        self.device = device
        self.offers: dict[str, OutgoingTransfer] = {}

    async def load(self, store: TransferStore, *, lost: bool) -> None:
        self._store = store
        now = self.clock()
        for t in await asyncio.to_thread(store.load_offers):
            if t.expired(now):
                continue
            self.offers[t.id] = t
            if lost:
                for f in t.files.values():
                    if not f.state.final:
                        f.finish(FileState.FAILED, "the desktop lost its phone-link key (keyring); send it again")
                        await asyncio.to_thread(store.update_offer_file, t.id, f, now)

    # --- what the phone sees --------------------------------------------------------------------
    def file_key(self, t: OutgoingTransfer, f: OutgoingFile) -> bytes:
        return self.master.file_key("down", t.id, f.id, f.key_salt)

    def public(self, t: OutgoingTransfer) -> dict[str, Any]:
        files = sorted(t.files.values(), key=lambda f: f.seq)
        return {
            "offer": t.id,
            "created_at": t.created_at,
            "files": [f.public(self.file_key(t, f)) for f in files],
        }

    def public_offers(self, device_id: str) -> list[dict[str, Any]]:
        now = self.clock()
        return [self.public(t) for t in self.offers.values() if t.device_id == device_id and t.pending(now)]

    # --- offering -------------------------------------------------------------------------------
    async def send_files(self, paths: Sequence[Path], *, device_id: str) -> OutgoingTransfer:
        """Offer files to a paired device. The caller checked the paths (pathguard); this hashes them."""
        device = await self.device(device_id)
        if device is None or device.problem(self.clock()) is not None:
            raise LookupError(f"no paired device with id {device_id!r}")
        files: dict[str, OutgoingFile] = {}
        for i, p in enumerate(paths):
            f = await asyncio.to_thread(describe_file, Path(p), i)
            files[f.id] = f
        transfer = OutgoingTransfer(id=new_id(), device_id=device_id, files=files, created_at=self.clock())
        await asyncio.to_thread(self.store.add_offer, transfer, self.clock())
        self.offers[transfer.id] = transfer
        self.push(device_id, "offer", self.public(transfer))
        return transfer

    def cancel(self, offer_id: str, reason: str) -> bool:
        t = self.offers.get(offer_id)
        if t is None:
            return False
        self._cancel(t, reason)
        return True

    def cancel_device(self, device_id: str, reason: str) -> None:
        for t in list(self.offers.values()):
            if t.device_id == device_id and t.pending(self.clock()):
                self._cancel(t, reason)

    def _cancel(self, t: OutgoingTransfer, reason: str) -> None:
        t.cancelled = True
        for f in t.files.values():
            if not f.state.final:
                f.finish(FileState.CANCELLED, reason)
        self._persist_cancel(t)
        self.push(t.device_id, "cancel", {"offer": t.id})

    def _persist_cancel(self, t: OutgoingTransfer) -> None:
        if self._store is not None:
            try:
                self._store.cancel_offer(t, self.clock())  # small and rare: on the loop, so it is never lost
            except Exception:
                log.exception("could not record the cancelled offer %s", t.id)

    # --- downloads ------------------------------------------------------------------------------
    def find(self, device_id: str, offer_id: str, file_id: str) -> tuple[OutgoingTransfer, OutgoingFile]:
        t = self.offers.get(offer_id)
        f = t.files.get(file_id) if t is not None and t.device_id == device_id else None
        if t is None or f is None:
            raise Problem("not_found", "No such file offer.")
        if t.cancelled or f.state is FileState.CANCELLED:
            raise Problem("cancelled", "This transfer was cancelled.")
        if t.expired(self.clock()):
            raise Problem("finished", "This offer has expired. Ask for the file again.")
        if f.state is FileState.FAILED:
            raise Problem("changed", f"This file cannot be sent: {f.error or 'it failed'}.")
        return t, f

    async def check_unchanged(self, t: OutgoingTransfer, f: OutgoingFile) -> None:
        try:
            st = await asyncio.to_thread(f.path.stat)
        except OSError:
            st = None
        if st is None or st.st_size != f.size or st.st_mtime_ns != f.mtime_ns:
            await self.fail(t, f, "the file changed or was removed on the desktop after it was offered")
            raise Problem("changed", "The file changed on the desktop after it was offered. Ask for it again.")

    async def served(self, t: OutgoingTransfer, f: OutgoingFile, records: int) -> None:
        """``records`` records of ``f`` are about to go out (progress; written to the database when the
        state changes and every :data:`PERSIST_EVERY` records, not for every batch)."""
        if records <= f.served and f.state is not FileState.QUEUED:
            return
        before = f.served
        f.served = max(f.served, records)
        if f.state is FileState.QUEUED:
            f.state = FileState.SENDING
            before = -PERSIST_EVERY
        if f.served // PERSIST_EVERY != before // PERSIST_EVERY or f.served >= f.records:
            await asyncio.to_thread(self.store.update_offer_file, t.id, f, self.clock())
        self.emit(
            EventKind.TRANSFER_PROGRESS,
            t.device_id,
            session=t.id,
            file=f.id,
            name=f.name,
            bytes=min(f.size, f.served * (1 << 20)),
            size=f.size,
        )

    async def fail(self, t: OutgoingTransfer, f: OutgoingFile, reason: str) -> None:
        if f.state.final:
            return
        f.finish(FileState.FAILED, reason)
        await asyncio.to_thread(self.store.update_offer_file, t.id, f, self.clock())
        self.push(t.device_id, "state", {"offer": t.id, "file": f.id, "state": "failed"})
        self.emit(EventKind.TRANSFER_FAILED, t.device_id, session=t.id, file=f.id, name=f.name, reason=reason)

    async def acknowledge(self, device_id: str, offer_id: str, file_id: str, state: str, reason: str) -> FileState:
        """The phone's report on one file: ready (held, authenticated), saved (and its save began), failed."""
        t = self.offers.get(offer_id)
        f = t.files.get(file_id) if t is not None and t.device_id == device_id else None
        if t is None or f is None:
            raise Problem("not_found", "No such file offer.")
        target = ACK_STATES.get(state)
        if target is None:
            raise Problem("bad_request", "state must be ready, saved or failed.")
        if f.state.final or (target is FileState.READY and f.state is FileState.READY):
            return f.state
        if target is FileState.FAILED:
            await self.fail(t, f, f"the phone reported: {reason or 'failed'}")
            return f.state
        if target is FileState.READY:
            f.state = FileState.READY
            f.done.set()
            self.emit(EventKind.FILE_READY, device_id, session=t.id, file=f.id, name=f.name)
        else:
            f.finish(FileState.DELIVERED)
            self.emit(
                EventKind.DELIVERY_ACKNOWLEDGED,
                device_id,
                session=t.id,
                file=f.id,
                name=f.name,
                sha256=f.sha256,
                path=str(f.path),
            )
        await asyncio.to_thread(self.store.update_offer_file, t.id, f, self.clock())
        self.push(device_id, "state", {"offer": t.id, "file": f.id, "state": f.state.value})
        return f.state
