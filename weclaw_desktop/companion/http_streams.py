"""The phone link's streaming endpoints: the sealed event stream, downloads as sealed records (read and sealed
one batch ahead, never sealing bytes that changed under it) and uploads checked record by record."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

from aiohttp import web

from weclaw_desktop.companion import wire
from weclaw_desktop.companion.crypto import (
    RECORD,
    SALT,
    TAG,
    CryptoError,
    FrameSealer,
    RecordSealer,
    b64e,
    digest,
    record_len,
)
from weclaw_desktop.companion.http_base import drop, read_exactly, signed
from weclaw_desktop.companion.problems import Problem

HEARTBEAT_S = 15.0
POLL_S = 0.5  # how often an idle event stream checks that the phone is still there
BATCH = 8  # records read and sealed per step of a download
MAX_UPLOAD_RECORDS = 16  # records in one upload request


async def events(request: web.Request) -> web.StreamResponse:
    s = await signed(request, digest(b""))
    core = s.core
    try:
        resp = web.StreamResponse(headers={"Content-Type": "application/octet-stream", "Cache-Control": "no-store"})
        await resp.prepare(request)
        sealer = FrameSealer(s.session.s2c, str(s.seq))
        queue = core.open_stream(s.device_id)
        try:
            await resp.write(sealer.salt)
            await resp.write(sealer.seal(wire.dumps({"kind": "hello", "data": await core.snapshot(s.device_id)})))
            quiet = 0.0
            while True:
                try:
                    item = await asyncio.wait_for(queue.get(), POLL_S)
                except TimeoutError:
                    if request.transport is None or request.transport.is_closing():
                        break  # the phone went away: it is offline now, not at the next heartbeat
                    quiet += POLL_S
                    if quiet < HEARTBEAT_S:
                        continue
                    item = ("ping", {})
                quiet = 0.0
                if item is None:
                    break
                await resp.write(sealer.seal(wire.dumps({"kind": item[0], "data": item[1]})))
                if item[0] == "revoked":
                    break
        except (ConnectionError, RuntimeError):  # the phone went away (aiohttp raises RuntimeError on closed writers)
            pass
        finally:
            core.close_stream(s.device_id, queue)
        return resp
    finally:
        s.release()


def _query_int(request: web.Request, name: str) -> int:
    raw = request.query.get(name, "")
    if not raw.isdigit() or len(raw) > 12:
        raise Problem("bad_request", f"'{name}' must be a whole number.")
    return int(raw)


async def download(request: web.Request) -> web.StreamResponse:
    s = await signed(request, digest(b""))
    core = s.core
    try:
        q = request.query
        t, f = core.outbox.find(s.device_id, q.get("o", ""), q.get("f", ""))
        if s.lane != f"dl:{f.id}":
            raise Problem("bad_request", "A download goes on its own lane.")
        first = _query_int(request, "from")
        if first > f.records:
            raise Problem("bad_request", "'from' is past the last record.")
        await core.outbox.check_unchanged(t, f)
        sealer = RecordSealer(core.outbox.file_key(t, f), f.id, f.size)
        reader = await asyncio.to_thread(_FileRecords, f.path, f.size, f.mtime_ns)
        try:
            resp = web.StreamResponse(headers={"Content-Type": "application/octet-stream", "Cache-Control": "no-store"})
            resp.content_length = SALT + sum(record_len(f.size, i) + TAG for i in range(first, f.records))
            await resp.prepare(request)
            await resp.write(sealer.salt)
            # read and seal the next batch in a thread while this one is written (one batch ahead)
            ahead = asyncio.ensure_future(
                asyncio.to_thread(reader.sealed, sealer, first, min(f.records, first + BATCH))
            )
            index = first
            try:
                while index < f.records:
                    end = min(f.records, index + BATCH)
                    chunk = await ahead
                    if end < f.records:
                        nxt = min(f.records, end + BATCH)
                        ahead = asyncio.ensure_future(asyncio.to_thread(reader.sealed, sealer, end, nxt))
                    if chunk is None:
                        await core.outbox.fail(t, f, "the file changed on the desktop while it was being sent")
                        drop(request)
                        return resp
                    await core.outbox.served(t, f, end)
                    await resp.write(chunk)
                    index = end
            finally:
                if not ahead.done():
                    ahead.cancel()
                    with contextlib.suppress(BaseException):
                        await ahead
            await resp.write_eof()
            return resp
        finally:
            await asyncio.to_thread(reader.close)
    finally:
        s.release()


class _FileRecords:
    """An open file read record by record; stops if the file changes under it (never seals changed bytes)."""

    def __init__(self, path: Path, size: int, mtime_ns: int) -> None:
        self.fh = path.open("rb", buffering=0)
        self.size = size
        self.mtime_ns = mtime_ns
        self.plain = bytearray(RECORD)

    def sealed(self, sealer: RecordSealer, first: int, end: int) -> bytearray | None:
        """Records first..end-1 sealed into one new buffer (read into a reused one: no other copies)."""
        out = bytearray(sum(record_len(self.size, i) + TAG for i in range(first, end)))
        view = memoryview(out)
        self.fh.seek(first * RECORD)
        offset = 0
        for i in range(first, end):
            n = record_len(self.size, i)
            plain = memoryview(self.plain)[:n]
            if self.fh.readinto(plain) != n:
                return None
            sealer.seal_into(i, plain, view[offset : offset + n + TAG])
            offset += n + TAG
        st = os.fstat(self.fh.fileno())
        if (st.st_size, st.st_mtime_ns) != (self.size, self.mtime_ns):
            return None  # changed while being read: these bytes are not sent
        return out

    def close(self) -> None:
        self.fh.close()


async def upload(request: web.Request) -> web.StreamResponse:
    if request.content_type != "application/octet-stream":
        raise Problem("unsupported_type", "Records are sent as application/octet-stream.")
    salt = await read_exactly(request, SALT)
    if len(salt) != SALT:
        raise Problem("size_mismatch", "The body is too short.")
    s = await signed(request, "salt:" + b64e(salt))
    core = s.core
    try:
        q = request.query
        first = _query_int(request, "from")
        session, f = core.inbox.target(s.device_id, q.get("u", ""), q.get("f", ""), first)
        if s.lane != f"up:{f.id}":
            raise Problem("bad_request", "An upload goes on its own lane.")
        sealer = RecordSealer(core.inbox.file_key(session, f), f.id, f.size, salt)
        f.busy = True
        try:
            index, batch = first, []
            while index < f.records and index - first < MAX_UPLOAD_RECORDS:
                sealed = await read_exactly(request, record_len(f.size, index) + TAG)
                if not sealed:
                    break
                try:
                    batch.append(sealer.open(index, sealed))
                except CryptoError:
                    if batch:
                        await core.inbox.write(session, f, batch)
                    raise Problem("damaged", f"Record {index} did not authenticate; send it again.") from None
                index += 1
                if len(batch) == BATCH:
                    await core.inbox.write(session, f, batch)
                    batch = []
            if batch:
                await core.inbox.write(session, f, batch)
            if await request.content.read(1):
                raise Problem("size_mismatch", "The body is longer than its records.")
        finally:
            f.busy = False
        if f.received >= f.records:
            device = await core.device(s.device_id)
            return s.answer(await core.inbox.finish(session, f, device.name if device else ""))
        return s.answer({"file": f.id, "received": f.received, "done": False})
    finally:
        s.release()
