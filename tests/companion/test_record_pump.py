"""The download's record pump (companion/record_pump.py): a thread that reads and seals records ahead into a
few reused buffers. What must survive: the records are exactly the protocol's (the existing decoder and the
Python phone open them, byte for byte what RecordSealer.seal makes), a flipped bit or a cut record is still
refused, a buffer the transport may still be sending from is never overwritten, bytes of a file that changed
while it was read are never handed out, and the thread and the file end with the download."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import ClassVar

import aiohttp
import pytest
from companion_helpers import Rig, make_file, wait_for

from weclaw_desktop.companion import crypto as c
from weclaw_desktop.companion import http_streams
from weclaw_desktop.companion.record_pump import FileChanged, RecordPump, Slot, sealed_len, unshared

KEY = bytes(range(32))


async def pump_all(pump: RecordPump) -> list[bytes]:
    """Every slot the pump gives, as bytes, each slot recycled as the download does."""
    out: list[bytes] = []
    while (slot := await pump.next()) is not None:
        out.append(bytes(slot.buf[: slot.length]))
        pump.recycle(slot)
    return out


def opened(sealer: c.RecordSealer, body: bytes, size: int, first: int) -> bytes:
    return b"".join(sealer.open(i, rec) for i, rec in c.split_records(body, size, first))


@pytest.mark.parametrize("first", [0, 3])
async def test_pump_records_are_the_protocols_and_open_with_the_decoder(tmp_path: Path, first: int) -> None:
    """Slots of two records, two slots (so every buffer is reused several times): the body opens with the
    decoder the phone uses, equals the file from record ``first`` on, and each record is byte for byte
    what RecordSealer.seal makes with the same salt (the page's @noble/ciphers opens those: test_crypto)."""
    size = 5 * c.RECORD + 123
    src = make_file(tmp_path, "f.bin", size)
    data = src.read_bytes()
    sealer = c.RecordSealer(KEY, "f1", size)
    pump = RecordPump(src, size, src.stat().st_mtime_ns, sealer, first, slot_records=2, slots=2)
    await pump.start()
    try:
        body = b"".join(await pump_all(pump))
    finally:
        await pump.close()
    assert len(body) == sealed_len(size, first, sealer.count)
    decoder = c.RecordSealer(KEY, "f1", size, sealer.salt)
    assert opened(decoder, body, size, first) == data[first * c.RECORD :]
    reference = c.RecordSealer(KEY, "f1", size, sealer.salt)
    expected = b"".join(
        reference.seal(i, data[i * c.RECORD : i * c.RECORD + c.record_len(size, i)]) for i in range(first, sealer.count)
    )
    assert body == expected
    assert pump.fresh == 0  # nothing held the buffers: all were reused


async def test_an_empty_file_is_one_empty_record(tmp_path: Path) -> None:
    src = tmp_path / "empty"
    src.write_bytes(b"")
    sealer = c.RecordSealer(KEY, "e", 0)
    pump = RecordPump(src, 0, src.stat().st_mtime_ns, sealer, 0)
    await pump.start()
    body = b"".join(await pump_all(pump))
    await pump.close()
    assert len(body) == c.TAG
    assert opened(c.RecordSealer(KEY, "e", 0, sealer.salt), body, 0, 0) == b""


async def test_a_tampered_or_cut_pump_record_is_refused(tmp_path: Path) -> None:
    """A flipped bit in any record, a record moved, or a body cut inside its last record does not open."""
    size = 4 * c.RECORD + 99
    src = make_file(tmp_path, "f.bin", size)
    sealer = c.RecordSealer(KEY, "f1", size)
    pump = RecordPump(src, size, src.stat().st_mtime_ns, sealer, 0, slot_records=3, slots=2)
    await pump.start()
    body = b"".join(await pump_all(pump))
    await pump.close()
    decoder = c.RecordSealer(KEY, "f1", size, sealer.salt)
    records = list(c.split_records(body, size, 0))
    for index in (0, 2, 4):
        flipped = bytearray(records[index][1])
        flipped[len(flipped) // 2] ^= 0x01
        with pytest.raises(c.CryptoError):
            decoder.open(index, bytes(flipped))
    tag = bytearray(records[3][1])
    tag[-1] ^= 0x80  # the tag itself
    with pytest.raises(c.CryptoError):
        decoder.open(3, bytes(tag))
    with pytest.raises(c.CryptoError):
        decoder.open(1, records[2][1])
    with pytest.raises(c.CryptoError):
        list(c.split_records(body[:-1], size, 0))
    with pytest.raises(c.CryptoError):
        c.RecordSealer(KEY, "f1", size, os.urandom(c.SALT)).open(0, records[0][1])  # another response's key


async def test_a_buffer_still_held_is_never_overwritten(tmp_path: Path) -> None:
    """A transport that keeps a view of what the kernel has not taken yet (asyncio's does since 3.12) must
    find those bytes unchanged: a slot still viewed is not reused; the pump makes a new buffer instead."""
    size = 6 * c.RECORD
    src = make_file(tmp_path, "f.bin", size)
    sealer = c.RecordSealer(KEY, "f1", size)
    pump = RecordPump(src, size, src.stat().st_mtime_ns, sealer, 0, slot_records=1, slots=2)
    await pump.start()
    try:
        slot = await pump.next()
        assert isinstance(slot, Slot)
        old = slot.buf
        held = memoryview(old)[: slot.length]  # what a transport would hold
        before = bytes(held)
        assert not unshared(old)
        pump.recycle(slot)
        rest = await pump_all(pump)
        assert bytes(held) == before and len(rest) == 5
        assert pump.fresh == 1 and slot.buf is not old
        held.release()
        assert unshared(old)
    finally:
        await pump.close()


@pytest.mark.parametrize("change", ["rewrite", "truncate"])
async def test_bytes_of_a_file_changed_while_pumped_are_never_handed_out(tmp_path: Path, change: str) -> None:
    """After the file changes, the pump may still hand out slots it sealed before, all of the original bytes;
    then it stops with FileChanged. Nothing sealed from the new bytes comes out."""
    size = 8 * c.RECORD
    src = make_file(tmp_path, "f.bin", size)
    original = src.read_bytes()
    mtime = src.stat().st_mtime_ns
    sealer = c.RecordSealer(KEY, "f1", size)
    decoder = c.RecordSealer(KEY, "f1", size, sealer.salt)
    pump = RecordPump(src, size, mtime, sealer, 0, slot_records=1, slots=2)
    await pump.start()
    try:
        first = await pump.next()
        assert isinstance(first, Slot)
        if change == "rewrite":
            with src.open("r+b") as fh:
                fh.write(os.urandom(size))
        else:
            with src.open("r+b") as fh:
                fh.truncate(3 * c.RECORD)
        os.utime(src, ns=(mtime + 5_000_000_000, mtime + 5_000_000_000))
        slots = [first]
        with pytest.raises(FileChanged):
            pump.recycle(first)
            while (slot := await pump.next()) is not None:
                slots.append(slot)
                assert (
                    decoder.open(slot.first, bytes(slot.buf[: slot.length]))
                    == original[slot.first * c.RECORD : slot.end * c.RECORD]
                )
                pump.recycle(slot)
        assert len(slots) < 8
    finally:
        await pump.close()


async def test_close_mid_file_ends_the_thread_and_closes_the_file(tmp_path: Path) -> None:
    size = 12 * c.RECORD
    src = make_file(tmp_path, "f.bin", size)
    pump = RecordPump(src, size, src.stat().st_mtime_ns, c.RecordSealer(KEY, "f1", size), 0, slot_records=1, slots=2)
    await pump.start()
    assert await pump.next() is not None
    await pump.close()
    thread = pump._thread
    assert thread is not None
    await wait_for(lambda: not thread.is_alive())  # close() returns once the thread's last act is scheduled
    assert pump._fh is not None and pump._fh.closed


class RecordingPump(RecordPump):
    """The real pump, remembered so the test can look at it after the server used it."""

    made: ClassVar[list[RecordingPump]] = []

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        RecordingPump.made.append(self)


async def test_server_download_through_the_pump_opens_and_reuses_its_buffers(
    rig: Rig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A download of many more records than the pump holds, through the real server, opens byte for byte
    with the Python phone (whole and resumed); no buffer had to be made anew (memory stays flat); a flipped
    bit in the real response is refused; the thread ends with each response."""
    RecordingPump.made = []
    monkeypatch.setattr(http_streams, "RecordPump", RecordingPump)
    phone = await rig.pair()
    size = 21 * c.RECORD + 5
    src = make_file(tmp_path / "o", "big.bin", size)
    data = src.read_bytes()
    await rig.service.send_files([src], device_id=phone.device_id)
    offer = (await phone.offers())[0]
    f = offer["files"][0]
    assert await phone.download(offer["offer"], f) == data
    assert await phone.download(offer["offer"], f, first=13) == data[13 * c.RECORD :]
    path = f"/api/v1/download?o={offer['offer']}&f={f['id']}&from=0"
    headers, _ = phone.sign("GET", path, f"dl:{f['id']}", c.digest(b""))
    async with rig.http.get(rig.base + path, headers=headers) as r:
        raw = bytearray(await r.read())
    raw[c.SALT + 17 * (c.RECORD + c.TAG) + 4321] ^= 0x10
    decoder = c.RecordSealer(c.b64d(f["key"]), f["id"], size, bytes(raw[: c.SALT]))
    records = list(c.split_records(bytes(raw[c.SALT :]), size, 0))
    assert decoder.open(16, records[16][1]) == data[16 * c.RECORD : 17 * c.RECORD]
    with pytest.raises(c.CryptoError):
        decoder.open(17, records[17][1])
    assert len(RecordingPump.made) == 3
    for pump in RecordingPump.made:
        assert pump.fresh == 0
        assert pump._thread is not None
        await wait_for(lambda pump=pump: not pump._thread.is_alive())
        assert pump._fh is not None and pump._fh.closed


async def test_a_phone_that_goes_away_mid_download_ends_the_pump(
    rig: Rig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The phone reads a little of a large download and drops the connection: the pump thread stops and
    the file is closed (nothing keeps reading and sealing for nobody)."""
    RecordingPump.made = []
    monkeypatch.setattr(http_streams, "RecordPump", RecordingPump)
    phone = await rig.pair()
    size = 64 * c.RECORD
    src = tmp_path / "sparse.bin"
    with src.open("wb") as fh:
        fh.truncate(size)
    await rig.service.send_files([src], device_id=phone.device_id)
    offer = (await phone.offers())[0]
    f = offer["files"][0]
    path = f"/api/v1/download?o={offer['offer']}&f={f['id']}&from=0"
    headers, _ = phone.sign("GET", path, f"dl:{f['id']}", c.digest(b""))
    async with aiohttp.ClientSession() as http:
        r = await http.get(rig.base + path, headers=headers)
        assert r.status == 200
        assert len(await r.content.readexactly(c.SALT + c.RECORD)) == c.SALT + c.RECORD
        r.close()  # drops the connection
    await wait_for(lambda: len(RecordingPump.made) == 1)
    pump = RecordingPump.made[0]
    await wait_for(lambda: pump._thread is not None and not pump._thread.is_alive(), within=10)
    assert pump._fh is not None and pump._fh.closed


async def test_a_cancelled_download_re_raises_and_ends_the_thread(tmp_path: Path) -> None:
    """A download task cancelled while the pump waits (its slots all sealed, none written back) gets its
    CancelledError back from close(), not swallowed, and the thread and the file still end."""
    size = 16 * c.RECORD
    src = make_file(tmp_path, "f.bin", size)
    pump = RecordPump(src, size, src.stat().st_mtime_ns, c.RecordSealer(KEY, "f1", size), 0, slot_records=1, slots=2)
    started = asyncio.Event()

    async def download() -> None:
        await pump.start()
        try:
            assert await pump.next() is not None  # never recycled: the thread blocks on a free slot
            started.set()
            await asyncio.sleep(3600)
        finally:
            await pump.close()

    task = asyncio.ensure_future(download())
    await asyncio.wait_for(started.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    thread = pump._thread
    assert thread is not None
    await wait_for(lambda: not thread.is_alive())
    assert pump._fh is not None and pump._fh.closed
