"""The phone link as an attacker on the same Wi-Fi (or a web page in the user's browser) would try it:
rebinding, floods, blind cross-site POSTs, slow and hostile bodies, connection and disk exhaustion.
Rate limits and expiry move an injected clock; nothing here sleeps for a window to pass."""

from __future__ import annotations

import asyncio
import json
import os
import random

import aiohttp
import pytest
from companion_helpers import Refused, Rig, pair_phone, wait_for
from fakeclock import FakeClock

from weclaw_desktop.companion import crypto as c
from weclaw_desktop.companion.limits import Limits


@pytest.fixture
def limits() -> Limits:
    return Limits(
        header_timeout_s=3.0,
        body_idle_s=0.5,
        connections_per_source=4,
        connections_total=10,
        requests_per_device=3,
        pair_failures_per_min=5,
        reserve_bytes=10 << 20,
        daily_bytes=12 << 20,
    )


def from_source(address: str) -> aiohttp.ClientSession:
    """An HTTP client whose connections come from ``address`` (any of 127.0.0.0/8 on loopback)."""
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=(address, 0), force_close=True))


async def wrong_pair(http: aiohttp.ClientSession, rig: Rig) -> int:
    body = {"pid": "AAAAAAAAAAAA", "req": c.seal(os.urandom(32), b"{}", "x")}
    async with http.post(rig.base + "/api/v1/pair", json=body, headers={"Origin": rig.base}) as r:
        return r.status


# --- who may talk to the server ---------------------------------------------------------------------------


async def test_dns_rebinding_host_is_refused(rig: Rig) -> None:
    """A page on evil.example that rebinds its name to this address sends Host: evil.example: refused,
    for the page and the API alike; the advertised address works."""
    for path in ("/", "/app.js", "/api/v1/hello"):
        for host in ("evil.example", f"evil.example:{rig.service.port}", f"localhost:{rig.service.port}", ""):
            async with rig.http.get(rig.base + path, headers={"Host": host}) as r:
                assert r.status == 421, (path, host)
                assert (await r.json())["code"] == "bad_host"
    async with rig.http.get(rig.base + "/") as r:
        assert r.status == 200


async def test_pairing_needs_json_and_the_pages_own_origin(rig: Rig) -> None:
    """Blind cross-site POSTs (a form, text/plain, another Origin, no Origin) never reach the pairing check
    and never count against the phone's address."""
    code = rig.service.new_pairing_code()
    for headers, data in [
        ({"Content-Type": "text/plain", "Origin": rig.base}, "{}"),
        ({"Content-Type": "application/x-www-form-urlencoded", "Origin": rig.base}, "a=b"),
        ({"Content-Type": "application/json", "Origin": "http://evil.example"}, "{}"),
        ({"Content-Type": "application/json"}, "{}"),
        ({"Content-Type": "application/json", "Origin": "null"}, "{}"),
    ]:
        for _ in range(20):
            async with rig.http.post(rig.base + "/api/v1/pair", data=data, headers=headers) as r:
                assert r.status in (403, 415), headers
    phone = await pair_phone(rig.http, code.url)  # 100 refusals later, from the same address: still pairs
    assert phone.device_id


async def test_a_valid_code_pairs_under_a_flood(rig: Rig) -> None:
    """Ten other hosts send wrong pairing proofs as fast as they can; each is limited on its own, and the
    phone holding the QR code pairs at once."""
    code = rig.service.new_pairing_code()
    stop = asyncio.Event()
    statuses: dict[str, list[int]] = {}

    async def flood(address: str) -> None:
        async with from_source(address) as http:
            while not stop.is_set():
                try:
                    status = await wrong_pair(http, rig)
                except aiohttp.ClientError:  # refused before the body was read: the connection is closed
                    status = 0
                statuses.setdefault(address, []).append(status)

    floods = [asyncio.ensure_future(flood(f"127.0.0.{i}")) for i in range(10, 20)]
    try:
        await wait_for(lambda: sum(len(v) for v in statuses.values()) > 200, within=20)
        phone = await pair_phone(rig.http, code.url, "Real phone")
    finally:
        stop.set()
        await asyncio.gather(*floods)
    assert [d.name for d in await rig.service.list_devices()] == ["Real phone"]
    assert phone.device_id
    for address, seen in statuses.items():
        assert seen[:5] == [401] * 5 and set(seen[5:]) <= {429, 0} and 429 in seen, address


async def test_wrong_attempts_limit_their_source_until_the_window_passes(rig: Rig, clock: FakeClock) -> None:
    for _ in range(5):
        assert await wrong_pair(rig.http, rig) == 401
    async with rig.http.post(
        rig.base + "/api/v1/pair", json={"pid": "x", "req": {}}, headers={"Origin": rig.base}
    ) as r:
        assert r.status == 429
        assert 1 <= int(r.headers["Retry-After"]) <= 60
    code = rig.service.new_pairing_code()
    with pytest.raises(Refused) as limited:  # this source guessed: even a right code waits out the limit
        await pair_phone(rig.http, code.url)
    assert limited.value.status == 429
    async with from_source("127.0.0.2") as other:  # another source is not affected
        assert (await pair_phone(other, code.url)).device_id
    clock.advance(61)
    assert await wrong_pair(rig.http, rig) == 401


async def test_showing_a_new_code_invalidates_the_old_one(rig: Rig, clock: FakeClock) -> None:
    old = rig.service.new_pairing_code()
    new = rig.service.new_pairing_code()
    with pytest.raises(Refused) as refused:
        await pair_phone(rig.http, old.url)
    assert refused.value.code == "invalid"
    phone = await pair_phone(rig.http, new.url)
    with pytest.raises(Refused):  # used once: gone
        await pair_phone(rig.http, new.url)
    late = rig.service.new_pairing_code()
    clock.advance(301)
    with pytest.raises(Refused):  # expired
        await pair_phone(rig.http, late.url)
    assert phone.device_id


# --- hostile bodies ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/api/v1/pair", "/api/v1/hello", "/api/v1/session"])
async def test_hostile_json_gets_400_or_413_never_500(rig: Rig, path: str) -> None:
    bodies = [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a":' * 5000 + b"1" + b"}" * 5000,
        b"{" + b'"a":[' * 9 + b"]" * 9 + b"}",
        b"not json",
        b"[]",
        b'"text"',
        b"\xff\xfe",
        b'{"pid": 5, "req": [1, 2]}',
        b'{"device": "../x", "gen": true}',
        b'{"device": "abc", "gen": 1, "challenge": "' + b"A" * 43 + b'", "nonce": "x", "mac": "y"}',
        b"x" * 70_000,
    ]
    rnd = random.Random(7)
    bodies += [bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 300))) for _ in range(30)]
    for body in bodies:
        async with rig.http.post(
            rig.base + path, data=body, headers={"Content-Type": "application/json", "Origin": rig.base}
        ) as r:
            assert r.status < 500, (body[:40], r.status)
            if r.status >= 400 or path != "/api/v1/hello":  # hello answers any JSON object with a challenge
                assert r.status in (400, 401, 413, 429) and (await r.json())["code"], (body[:40], r.status)


async def test_a_slow_body_is_dropped(rig: Rig) -> None:
    """A request that announces a body and then stalls is cut off after the idle timeout."""
    reader, writer = await asyncio.open_connection("127.0.0.1", rig.service.port)
    writer.write(
        (
            f"POST /api/v1/hello HTTP/1.1\r\nHost: {rig.service.authority}\r\nContent-Type: application/json\r\n"
            "Content-Length: 100\r\n\r\n{"
        ).encode()
    )
    await writer.drain()
    got = await asyncio.wait_for(reader.read(), 5)  # returns at EOF: the server hung up
    assert b" 200 " not in got
    writer.close()


async def test_half_sent_headers_are_dropped(rig: Rig) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", rig.service.port)
    writer.write(f"GET / HTTP/1.1\r\nHost: {rig.service.authority}\r\nX-Slow: ".encode())
    await writer.drain()
    assert await asyncio.wait_for(reader.read(), 8) == b""  # closed after the header timeout (3 s here)
    writer.close()


async def test_connection_caps_per_source_and_in_total(rig: Rig) -> None:
    """One host cannot hold more than its share of connections; at the total, a newcomer displaces the
    heaviest host's oldest unproven connection (so a flood never locks the phone out)."""

    async def connect(address: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.open_connection("127.0.0.1", rig.service.port, local_addr=(address, 0))

    async def closed(reader: asyncio.StreamReader, wait: float = 0.3) -> bool:
        try:
            return await asyncio.wait_for(reader.read(), wait) == b""
        except TimeoutError:
            return False

    held = [await connect("127.0.0.5") for _ in range(4)]
    await asyncio.sleep(0.05)
    extra = await connect("127.0.0.5")
    assert await closed(extra[0])  # a fifth from the same host: refused
    async with from_source("127.0.0.1") as http, http.get(rig.base + "/") as r:  # others still get in
        assert r.status == 200
    await asyncio.sleep(0.05)
    held += [await connect(f"127.0.0.{6 + i % 2}") for i in range(6)]  # 3 + 3: the total of 10 is reached
    await asyncio.sleep(0.05)
    newcomer = await connect("127.0.0.9")
    assert not await closed(newcomer[0])  # admitted ...
    assert sum([await closed(r) for r, _ in held[:4]]) == 1  # ... one of the heaviest host's connections went
    for _, w in [*held, newcomer, extra]:
        w.close()
    await asyncio.sleep(0.1)
    async with from_source("127.0.0.1") as http, http.get(rig.base + "/") as r:
        assert r.status == 200


async def test_one_device_cannot_hold_every_request_slot(rig: Rig) -> None:
    phone = await rig.pair()
    await phone.open_session()
    streams = []
    for _ in range(3):
        headers, _ = phone.sign("GET", "/api/v1/events", "ev", c.digest(b""))
        streams.append(await rig.http.get(rig.base + "/api/v1/events", headers=headers))
    await wait_for(lambda: rig.service.is_online(phone.device_id))
    with pytest.raises(Refused) as busy:
        await phone.call("/api/v1/state")
    assert (busy.value.status, busy.value.code) == (429, "busy")
    for s in streams:
        s.close()
    await asyncio.sleep(0.7)
    assert (await phone.call("/api/v1/state"))["offers"] == []


async def test_reservations_and_the_daily_quota(rig: Rig) -> None:
    """Declaring files reserves disk: a phone cannot reserve without sending, nor send without end."""
    phone = await rig.pair()

    async def prepare(name: str, size: int) -> dict[str, object]:
        return await phone.call("/api/v1/upload/prepare", {"files": [{"id": "f", "name": name, "size": size}]})

    await prepare("a.bin", 8 << 20)
    with pytest.raises(Refused) as reserve:
        await prepare("b.bin", 4 << 20)
    assert (reserve.value.status, reserve.value.code) == (507, "reserve")
    other = await rig.pair("Other phone")
    await other.call("/api/v1/upload/prepare", {"files": [{"id": "f", "name": "c.bin", "size": 4 << 20}]})  # per device
    first = rig.service.inbox.public_uploads(phone.device_id)[0]["upload"]
    await phone.call("/api/v1/cancel", {"id": first})
    await phone.send("d.bin", os.urandom(6 << 20))  # 6 MB saved today
    await prepare("e.bin", 5 << 20)  # 11 MB
    with pytest.raises(Refused) as quota:
        await prepare("f.bin", 2 << 20)  # 13 MB > 12 MB today
    assert quota.value.code == "quota"


async def test_unknown_fields_and_types_in_signed_calls(rig: Rig) -> None:
    phone = await rig.pair()
    for body in [
        {"files": "x"},
        {"files": [1]},
        {"files": [{"id": "a", "size": -1}]},
        {"files": [{"id": "a", "size": 1.5}]},
    ]:
        with pytest.raises(Refused) as bad:
            await phone.call("/api/v1/upload/prepare", body)
        assert bad.value.status == 400, body
    deep: object = 1
    for _ in range(20):
        deep = [deep]
    with pytest.raises(Refused) as bad:
        await phone.call("/api/v1/ack", {"items": deep})
    assert bad.value.status == 400 and bad.value.code == "too_deep"
    assert json.dumps(bad.value.body)


async def test_an_abandoned_reservation_is_freed(rig: Rig, clock: FakeClock) -> None:
    """Declared and never sent: after the idle time the reservation no longer blocks new uploads."""
    from weclaw_desktop.companion.transfers import UPLOAD_IDLE_S

    phone = await rig.pair()
    await phone.call("/api/v1/upload/prepare", {"files": [{"id": "f", "name": "a.bin", "size": 9 << 20}]})
    with pytest.raises(Refused):
        await phone.call("/api/v1/upload/prepare", {"files": [{"id": "f", "name": "b.bin", "size": 2 << 20}]})
    clock.advance(UPLOAD_IDLE_S + 1)
    await phone.open_session()  # the session idled out meanwhile; the pairing did not
    assert (await phone.call("/api/v1/upload/prepare", {"files": [{"id": "f", "name": "b.bin", "size": 2 << 20}]}))[
        "upload"
    ]
