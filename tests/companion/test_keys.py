"""Device keys and sessions: replay and reordering fail, keys expire and renew (injected clock), revocation
cuts everything in flight, pairing again replaces the entry, the phone's Unpair ends it on the desktop, and
offers and uploads survive a restart of the service."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from companion_helpers import MemorySecrets, Refused, Rig, make_file, pair_phone, wait_for
from fakeclock import FakeClock

from weclaw_desktop.companion import EventKind, FileState, wire
from weclaw_desktop.companion import crypto as c
from weclaw_desktop.companion.devices import KEY_LIFETIME_S, KEY_RENEW_AFTER_S


async def signed_post(rig: Rig, phone: object, path: str, lane: str, seq: int, body: dict[str, object]) -> int:
    """A control call with an explicit sequence number (what an attacker replaying or reordering sends)."""
    from companion_helpers import Phone

    assert isinstance(phone, Phone)
    raw = json.dumps(c.seal(phone.c2s, wire.dumps(body), wire.request_ad("POST", path, lane, seq))).encode()
    tag = c.mac(phone.mac_key, *wire.request_parts("POST", path, lane, seq, c.digest(raw)))
    headers = {"Content-Type": "application/json", wire.AUTH_HEADER: f"{phone.session}.{lane}.{seq}.{c.b64e(tag)}"}
    async with rig.http.post(rig.base + path, data=raw, headers=headers) as r:
        return r.status


async def test_replayed_and_reordered_requests_fail(rig: Rig) -> None:
    phone = await rig.pair()
    await phone.open_session()
    assert await signed_post(rig, phone, "/api/v1/state", "ctl", 5, {}) == 200
    assert await signed_post(rig, phone, "/api/v1/state", "ctl", 5, {}) == 401  # the same request again
    assert await signed_post(rig, phone, "/api/v1/state", "ctl", 3, {}) == 401  # an older one, late
    assert await signed_post(rig, phone, "/api/v1/state", "ctl", 6, {}) == 200
    assert await signed_post(rig, phone, "/api/v1/state", "dl:x", 1, {}) == 200  # lanes are independent


async def test_a_captured_session_request_cannot_be_replayed(rig: Rig) -> None:
    phone = await rig.pair()
    async with rig.http.post(rig.base + "/api/v1/hello", json={}, headers=phone.headers) as r:
        challenge = (await r.json())["challenge"]
    nonce = c.b64e(os.urandom(16))
    body = {
        "device": phone.device_id,
        "gen": phone.gen,
        "challenge": challenge,
        "nonce": nonce,
        "mac": c.b64e(c.mac(phone.key, "weclaw/v1/session", phone.device_id, str(phone.gen), challenge, nonce)),
    }
    async with rig.http.post(rig.base + "/api/v1/session", json=body) as r:
        assert r.status == 200
    async with rig.http.post(rig.base + "/api/v1/session", json=body) as r:
        assert (r.status, (await r.json())["code"]) == (401, "replay")
    body["mac"] = c.b64e(os.urandom(32))  # without the key: refused, and nothing is said about the device
    async with rig.http.post(rig.base + "/api/v1/session", json=body) as r:
        assert (r.status, (await r.json())["code"]) == (401, "auth")


async def test_challenges_expire(rig: Rig, clock: FakeClock) -> None:
    phone = await rig.pair()
    async with rig.http.post(rig.base + "/api/v1/hello", json={}) as r:
        challenge = (await r.json())["challenge"]
    clock.advance(120)
    nonce = c.b64e(os.urandom(16))
    mac = c.mac(phone.key, "weclaw/v1/session", phone.device_id, str(phone.gen), challenge, nonce)
    body = {"device": phone.device_id, "gen": phone.gen, "challenge": challenge, "nonce": nonce, "mac": c.b64e(mac)}
    async with rig.http.post(rig.base + "/api/v1/session", json=body) as r:
        assert (await r.json())["code"] == "replay"


async def test_keys_renew_while_used_and_expire_when_not(rig: Rig, clock: FakeClock) -> None:
    """A key older than a week is replaced at the next session; the old one works until its own end and
    stops once the new one is used. A key unused for its whole lifetime ends the pairing ('expired', proven)."""
    phone = await rig.pair()
    old_gen, old_key = phone.gen, phone.key
    clock.advance(KEY_RENEW_AFTER_S + 60)
    info = await phone.open_session()
    assert info["renew"] and phone.gen == old_gen + 1 and phone.key != old_key
    stale = type(phone)(phone.http, phone.base, phone.device_id, old_gen, old_key, phone.phone_id)
    await stale.open_session()  # the previous generation still opens (the phone may have missed the new one)
    await phone.open_session()  # the phone uses the new one: the previous stops
    with pytest.raises(Refused) as gone:
        await stale.open_session()
    assert gone.value.code in ("expired", "auth")
    clock.advance(KEY_LIFETIME_S + 60)
    with pytest.raises(Refused) as expired:
        await phone.open_session()
    assert expired.value.code == "expired"
    proof = c.b64d(expired.value.body["proof"])
    assert len(proof) == 32  # the page checks it with its key before it forgets the pairing
    assert await rig.service.list_devices() == []


async def test_revoking_cuts_every_transfer_in_flight(rig: Rig, tmp_path: Path) -> None:
    """Removing a phone on the desktop ends its download and its upload at once, not at their end."""
    phone = await rig.pair()
    await phone.open_session()
    src = make_file(tmp_path, "big.bin", 40 << 20)
    await rig.service.send_files([src], device_id=phone.device_id)
    offer = (await phone.offers())[0]
    f = offer["files"][0]
    path = f"/api/v1/download?o={offer['offer']}&f={f['id']}&from=0"
    headers, _ = phone.sign("GET", path, f"dl:{f['id']}", c.digest(b""))
    download = await rig.http.get(rig.base + path, headers=headers)
    await download.content.readexactly(c.SALT + c.RECORD)  # the download is under way; the reader then stalls

    prepared = await phone.call("/api/v1/upload/prepare", {"files": [{"id": "u", "name": "up.bin", "size": 8 << 20}]})
    up_path = f"/api/v1/upload?u={prepared['upload']}&f=u&from=0"
    sealer = c.RecordSealer(c.b64d(prepared["files"]["u"]), "u", 8 << 20)
    up_headers, _ = phone.sign("POST", up_path, "up:u", "salt:" + c.b64e(sealer.salt))
    reader, writer = await asyncio.open_connection("127.0.0.1", rig.service.port)
    head = f"POST {up_path} HTTP/1.1\r\nHost: {rig.service.authority}\r\nContent-Type: application/octet-stream\r\n"
    head += (
        "".join(f"{k}: {v}\r\n" for k, v in up_headers.items())
        + f"Content-Length: {c.SALT + 8 * (c.RECORD + c.TAG)}\r\n\r\n"
    )
    writer.write(head.encode() + sealer.salt + sealer.seal(0, os.urandom(c.RECORD)))
    await writer.drain()
    await wait_for(lambda: any(s.files["u"].received for s in rig.service.inbox.uploads.values()) or True)
    await asyncio.sleep(0.2)

    started = asyncio.get_running_loop().time()
    await rig.service.revoke(phone.device_id)
    with pytest.raises((ConnectionError, asyncio.IncompleteReadError, Exception)):
        while True:
            chunk = await asyncio.wait_for(download.content.read(1 << 20), 3)
            if not chunk:
                raise ConnectionError("ended")
    assert await asyncio.wait_for(reader.read(), 3) == b""  # the upload's connection is closed
    assert asyncio.get_running_loop().time() - started < 3
    writer.close()
    download.close()
    assert not [p for p in (rig.incoming).glob("up*")]
    with pytest.raises(Refused) as refused:
        await phone.call("/api/v1/state")
    assert refused.value.code in ("session", "revoked")


async def test_pairing_again_replaces_the_entry_and_rotates_the_key(rig: Rig) -> None:
    first = await rig.pair("Pixel 7", phone_id="same-phone")
    again = await rig.pair("Pixel 7 Pro", phone_id="same-phone")
    devices = await rig.service.list_devices()
    assert [(d.id, d.name) for d in devices] == [(first.device_id, "Pixel 7 Pro")]
    assert again.device_id == first.device_id and again.key != first.key and again.gen == first.gen + 1
    with pytest.raises(Refused):
        await first.open_session()  # the old key is gone
    await again.open_session()
    paired = [e for e in rig.events if e.kind is EventKind.DEVICE_PAIRED]
    assert [e.data["replaced"] for e in paired] == [False, True]
    other = await rig.pair("iPhone", phone_id="other-phone")
    assert len(await rig.service.list_devices()) == 2 and other.device_id != first.device_id


async def test_unpair_on_the_phone_ends_the_pairing_on_the_desktop(rig: Rig) -> None:
    phone = await rig.pair()
    assert (await phone.call("/api/v1/unpair"))["unpaired"]
    assert await rig.service.list_devices() == []
    with pytest.raises(Refused) as gone:
        await phone.open_session()
    assert gone.value.code == "revoked" and len(c.b64d(gone.value.body["proof"])) == 32
    revoked = [e for e in rig.events if e.kind is EventKind.DEVICE_REVOKED]
    assert [e.device_id for e in revoked] == [phone.device_id]


async def test_offers_and_uploads_survive_a_restart(rig: Rig, tmp_path: Path) -> None:
    """A stop and start (a new process would read the same database) keeps offers, their keys and states,
    and a half-sent upload, which then continues at the record the desktop has."""
    phone = await rig.pair()
    src = make_file(tmp_path, "movie.mp4", 3 * c.RECORD)
    transfer = await rig.service.send_files([src], device_id=phone.device_id)
    offer = (await phone.offers())[0]
    first_part = await phone.download(offer["offer"], offer["files"][0])
    data = os.urandom(5 * c.RECORD + 7)
    prepared = await phone.call(
        "/api/v1/upload/prepare", {"files": [{"id": "p", "name": "clip.mov", "size": len(data)}]}
    )
    key = c.b64d(prepared["files"]["p"])
    assert (await phone.upload(prepared["upload"], "p", key, data, n=2))["received"] == 2

    await rig.service.stop()
    rig.service.outbox.offers.clear()
    rig.service.inbox.uploads.clear()
    await rig.service.start("127.0.0.1", 0)
    phone.base, phone.session = rig.service.base_url, ""

    again = (await phone.offers())[0]
    assert again["offer"] == transfer.id and again["files"][0]["key"] == offer["files"][0]["key"]
    assert await phone.download(again["offer"], again["files"][0], first=1) == first_part[c.RECORD :]
    status = await phone.call("/api/v1/upload/status", {"upload": prepared["upload"]})
    assert status["files"]["p"]["received"] == 2
    assert (await phone.upload(prepared["upload"], "p", key, data, first=2))["done"]
    assert (rig.incoming / "clip.mov").read_bytes() == data
    await phone.call("/api/v1/ack", {"offer": transfer.id, "file": again["files"][0]["id"], "state": "saved"})
    reloaded = rig.service.outbox.offers[transfer.id]
    assert next(iter(reloaded.files.values())).state is FileState.DELIVERED


async def test_a_lost_keyring_ends_pairings_honestly(rig: Rig, tmp_path: Path) -> None:
    """If the master key is gone (keyring wiped), old pairings and offers cannot be opened: they end, and
    the service says so instead of failing on every request."""
    phone = await rig.pair()
    transfer = await rig.service.send_files([make_file(tmp_path, "a.txt", 5)], device_id=phone.device_id)
    await rig.service.stop()
    rig.service.master.__init__(MemorySecrets())  # type: ignore[misc]
    rig.service.outbox.offers.clear()
    await rig.service.start("127.0.0.1", 0)
    assert await rig.service.list_devices() == []
    f = next(iter(rig.service.outbox.offers[transfer.id].files.values()))
    assert f.state is FileState.FAILED and "key" in f.error
    new = await pair_phone(rig.http, rig.service.new_pairing_code().url)
    assert new.device_id
