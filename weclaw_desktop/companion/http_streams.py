"""The phone link's streaming endpoints: the sealed event stream, downloads as sealed records (read and sealed
ahead in a thread by :class:`.record_pump.RecordPump`, never sealing bytes that changed under it) and uploads
checked record by record."""

from __future__ import annotations

import asyncio

from aiohttp import web

from weclaw_desktop.companion import wire
from weclaw_desktop.companion.crypto import (
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
from weclaw_desktop.companion.record_pump import FileChanged, RecordPump, sealed_len

HEARTBEAT_S = 15.0
POLL_S = 0.5  # how often an idle event stream checks that the phone is still there
BATCH = 8  # upload records opened per database write
PROGRESS_RECORDS = 8  # download records between two progress reports
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
        pump = RecordPump(f.path, f.size, f.mtime_ns, sealer, first)
        await pump.start()
        try:
            resp = web.StreamResponse(headers={"Content-Type": "application/octet-stream", "Cache-Control": "no-store"})
            resp.content_length = SALT + sealed_len(f.size, first, f.records)
            await resp.prepare(request)
            await resp.write(sealer.salt)
            reported = first
            while (slot := await pump.next()) is not None:
                if slot.end - reported >= PROGRESS_RECORDS or slot.end >= f.records:
                    await core.outbox.served(t, f, slot.end)
                    reported = slot.end
                await write_records(resp, slot.records(f.size))
                pump.recycle(slot)
            await resp.write_eof()
            return resp
        except FileChanged:
            await core.outbox.fail(t, f, "the file changed on the desktop while it was being sent")
            drop(request)
            return resp
        finally:
            await pump.close()
    finally:
        s.release()


async def write_records(resp: web.StreamResponse, records: list[memoryview]) -> None:
    """Hand the socket one sealed record at a time: a record fits the socket's buffer, so the transport
    rarely has to copy what the kernel did not take. The views end with this call (the slot is reused)."""
    for record in records:
        await resp.write(record)


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
