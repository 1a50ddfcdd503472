"""The sealed records of one download, read and sealed ahead by one thread into a few reused buffers.

Why a thread of its own with reused buffers (measured in bench/companion.py, see docs/ARCHITECTURE.md):
``cryptography``'s ChaCha20-Poly1305 holds the GIL while it seals, so a second sealing thread buys nothing;
what costs is everything around the AEAD. Sealing small slots (:data:`SLOT_RECORDS` records) several slots
ahead keeps the socket fed while the loop or the thread waits for a core; reusing the slots spares the
allocator's zero-fill and page faults of a fresh 8 MiB buffer per step; handing the socket one record at a
time as a memoryview spares Python 3.11's transport two copies of what the kernel did not take at once.
One thread per download (not the loop's shared executor) keeps a long download from starving the database
writes and the rest of the app's ``to_thread`` work, and reads the file strictly in order (no ``pread``:
the same code runs on Windows).

The records are exactly those of :class:`.crypto.RecordSealer`; nothing about the protocol changes here.
Memory: ``SLOTS`` x ``SLOT_RECORDS`` sealed records plus one plaintext record (about 9 MiB), whatever the
file size.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import queue
import threading
from collections.abc import Callable
from pathlib import Path

from weclaw_desktop.companion.crypto import RECORD, TAG, RecordSealer, record_len

SLOT_RECORDS = 2  # records sealed per slot (one hand-off between the thread and the loop)
SLOTS = 4  # slots per download: one being written to the socket, up to three sealed ahead


class FileChanged(Exception):
    """The file's size or modification time changed while it was being read: those bytes are not sent."""


def sealed_len(size: int, first: int, end: int) -> int:
    """Bytes of records ``first``..``end - 1`` of a file of ``size`` bytes, sealed."""
    return sum(record_len(size, i) + TAG for i in range(first, end))


def unshared(buf: bytearray) -> bool:
    """True when no memoryview of ``buf`` is alive anywhere (a transport that keeps views of what the kernel
    has not taken yet -- asyncio's since 3.12 -- holds one), so its bytes may be overwritten. A bytearray with
    live views refuses to change size; the probe grows it by one byte and shrinks it back."""
    try:
        buf.append(0)
    except BufferError:
        return False
    del buf[-1]
    return True


class Slot:
    """One sealed step: records ``first``..``end - 1`` in ``buf[:length]``."""

    __slots__ = ("buf", "end", "first", "length")

    def __init__(self, buf: bytearray) -> None:
        self.buf = buf
        self.first = self.end = self.length = 0

    def records(self, size: int) -> list[memoryview]:
        """One memoryview per sealed record (the socket is handed one record at a time). Let them go before
        the slot is recycled (write them from a function of their own), or the slot cannot be reused."""
        view = memoryview(self.buf)
        out, offset = [], 0
        for i in range(self.first, self.end):
            n = record_len(size, i) + TAG
            out.append(view[offset : offset + n])
            offset += n
        return out


class RecordPump:
    """Records ``first``.. of one file, sealed by ``sealer`` in a thread, at most :data:`SLOTS` slots ahead.

    ``await next()`` gives the next :class:`Slot` (None after the last record) or raises :class:`FileChanged`
    / the reading thread's ``OSError``; ``recycle(slot)`` hands a written slot back. ``close()`` stops the
    thread, which closes the file itself (also when the loop is gone)."""

    def __init__(
        self,
        path: Path,
        size: int,
        mtime_ns: int,
        sealer: RecordSealer,
        first: int,
        *,
        slot_records: int = SLOT_RECORDS,
        slots: int = SLOTS,
    ) -> None:
        if slot_records < 1 or slots < 2:
            raise ValueError("a pump needs at least one record per slot and two slots")
        self.path = path
        self.size = size
        self.mtime_ns = mtime_ns
        self.sealer = sealer
        self.first = first
        self.count = sealer.count
        self.slot_records = slot_records
        self.slot_bytes = sealed_len(size, 0, min(self.count, slot_records))
        self.fresh = 0  # buffers made because a written one was still held (normally none)
        self._free: queue.SimpleQueue[Slot | None] = queue.SimpleQueue()
        for _ in range(slots):
            self._free.put(Slot(bytearray(self.slot_bytes)))
        self._ready: asyncio.Queue[Slot | BaseException | None] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._stopped = threading.Event()
        self._done = self._loop.create_future()
        self._thread: threading.Thread | None = None
        self._fh: io.FileIO | None = None

    async def start(self) -> None:
        """Open the file (raises OSError here, before any byte of the answer is sent) and start sealing."""
        self._fh = await asyncio.to_thread(self.path.open, "rb", buffering=0)
        self._thread = threading.Thread(target=self._run, name="weclaw-seal", daemon=True)
        self._thread.start()

    async def next(self) -> Slot | None:
        item = await self._ready.get()
        if isinstance(item, BaseException):
            raise item
        return item

    def recycle(self, slot: Slot) -> None:
        """A written slot goes back to the thread -- or, if the transport still holds a view of it, a new
        buffer does (the old one is freed when the transport lets go of it)."""
        if not unshared(slot.buf):
            slot.buf = bytearray(self.slot_bytes)
            self.fresh += 1
        self._free.put(slot)

    async def close(self) -> None:
        self._stopped.set()
        self._free.put(None)
        if self._thread is None:
            return
        await asyncio.shield(self._done)

    # --- the sealing thread ------------------------------------------------------------------------
    def _run(self) -> None:
        fh = self._fh
        assert fh is not None
        plain = bytearray(RECORD)
        try:
            index = self.first
            fh.seek(index * RECORD)
            while index < self.count and not self._stopped.is_set():
                slot = self._free.get()
                if slot is None or self._stopped.is_set():
                    return
                end = min(self.count, index + self.slot_records)
                self._fill(fh, plain, slot, index, end)
                self._post(slot)
                index = end
            self._post(None)
        except BaseException as exc:  # delivered to the loop, raised by next()
            self._post(exc)
        finally:
            fh.close()
            self._call(self._finish)

    def _fill(self, fh: io.FileIO, plain: bytearray, slot: Slot, first: int, end: int) -> None:
        view, pv = memoryview(slot.buf), memoryview(plain)
        offset = 0
        for i in range(first, end):
            n = record_len(self.size, i)
            if fh.readinto(pv[:n]) != n:
                raise FileChanged("the file is shorter than when it was offered")
            self.sealer.seal_into(i, pv[:n], view[offset : offset + n + TAG])
            offset += n + TAG
        st = os.fstat(fh.fileno())
        if (st.st_size, st.st_mtime_ns) != (self.size, self.mtime_ns):
            raise FileChanged("the file changed while it was being read")
        slot.first, slot.end, slot.length = first, end, offset

    def _post(self, item: Slot | BaseException | None) -> None:
        self._call(self._ready.put_nowait, item)

    def _finish(self) -> None:
        if not self._done.done():
            self._done.set_result(None)

    def _call(self, fn: Callable[..., object], *args: object) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting any more
            self._loop.call_soon_threadsafe(fn, *args)
