"""The phone-facing HTTP API against a real server on 127.0.0.1: auth, pairing, transfers, limits."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from pathlib import Path

import aiohttp
import pytest
from companion_helpers import Phone, Rig, make_file, sha, wait_for

from weclaw_desktop.companion import EventKind, FileState
from weclaw_desktop.companion.transfers import partial_dir

API_ENDPOINTS = [
    ("GET", "/api/v1/me"),
    ("GET", "/api/v1/events"),
    ("GET", "/api/v1/offers"),
    ("GET", "/api/v1/download?session=a&file=b&token=c"),
    ("POST", "/api/v1/ack"),
    ("POST", "/api/v1/upload/prepare"),
    ("POST", "/api/v1/upload?session=a&file=b&token=c"),
    ("POST", "/api/v1/cancel"),
]


# --- static page and general headers ----------------------------------------------------------------


async def test_page_is_served_with_strict_headers_and_no_cors(rig: Rig) -> None:
    async with rig.http.get(rig.base + "/", headers={"Origin": "http://evil.example"}) as r:
        assert r.status == 200
        assert "<title>WeClaw</title>" in await r.text()
        assert "script-src 'self'" in r.headers["Content-Security-Policy"]
        assert r.headers["X-Content-Type-Options"] == "nosniff"
        assert not [h for h in r.headers if h.lower().startswith("access-control-")]
    for asset in ("/app.js", "/app.css", "/sha256.js"):
        async with rig.http.get(rig.base + asset) as r:
            assert r.status == 200, asset
    async with rig.http.options(
        rig.base + "/api/v1/upload/prepare",
        headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"},
    ) as r:
        assert r.status == 401  # a preflight gets no CORS answer, just the token check
        assert not [h for h in r.headers if h.lower().startswith("access-control-")]


@pytest.mark.parametrize("path", ["/static/", "/resources/companion/", "/../tools.json", "/app.js/..%2f..%2fREADME.md"])
async def test_no_directory_listing_or_other_files(rig: Rig, path: str) -> None:
    async with rig.http.get(rig.base + path) as r:
        assert r.status == 404


# --- authentication -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path"), API_ENDPOINTS)
async def test_every_endpoint_needs_a_device_token(rig: Rig, method: str, path: str) -> None:
    async with rig.http.request(method, rig.base + path, json={}) as r:
        assert r.status == 401
        assert (await r.json())["code"] == "missing"
    async with rig.http.request(method, rig.base + path, json={}, headers={"Authorization": "Bearer nope"}) as r:
        assert r.status == 401
        assert (await r.json())["code"] == "unknown"


async def test_revoked_and_expired_devices_get_401(rig: Rig) -> None:
    a, b = await rig.pair("A"), await rig.pair("B")
    async with await a.get("/api/v1/me") as r:
        assert r.status == 200
        assert (await r.json())["device"]["name"] == "A"
    assert await rig.service.revoke(a.device_id)
    async with await a.get("/api/v1/offers") as r:
        assert r.status == 401
        assert (await r.json())["code"] == "revoked"
    await rig.service.expire(b.device_id)
    async with await b.get("/api/v1/offers") as r:
        assert r.status == 401
        assert (await r.json())["code"] == "expired"
    assert [d.name for d in await rig.service.list_devices()] == ["B"]  # revoked ones are not listed
    assert EventKind.DEVICE_REVOKED.value in rig.kinds()


async def test_cookie_only_authenticates_the_browser_gets(rig: Rig) -> None:
    phone = await rig.pair()
    cookie = {"Cookie": f"weclaw_device={phone.token}"}
    async with rig.http.get(rig.base + "/api/v1/offers", headers=cookie) as r:
        assert r.status == 401  # scripts must send the header
    async with rig.http.post(rig.base + "/api/v1/cancel", json={"session": "x"}, headers=cookie) as r:
        assert r.status == 401  # no state change on a cookie alone (no CSRF)
    async with rig.http.get(rig.base + "/api/v1/download?session=x&file=y&token=z", headers=cookie) as r:
        assert r.status == 404  # authenticated, then the unknown offer is not found


# --- pairing ----------------------------------------------------------------------------------------------


async def test_pairing_code_is_single_use_and_token_stored_only_hashed(rig: Rig) -> None:
    code = rig.service.new_pairing_code()
    assert code.url == f"{rig.base}/#t={code.token}"
    async with rig.http.post(rig.base + "/api/v1/pair", json={"token": code.token, "name": "Pixel"}) as r:
        assert r.status == 200
        body = await r.json()
        assert "HttpOnly" in r.headers["Set-Cookie"] and "SameSite=Strict" in r.headers["Set-Cookie"]
    async with rig.http.post(rig.base + "/api/v1/pair", json={"token": code.token, "name": "Thief"}) as r:
        assert r.status == 401
        assert (await r.json())["code"] == "invalid"
    device_token = body["token"]
    db = sqlite3.connect(rig.service.paths.database)
    rows = db.execute("SELECT * FROM companion_devices").fetchall()
    db.close()
    assert len(rows) == 1
    assert device_token not in repr(rows)
    assert sha(device_token.encode()) in rows[0]
    assert [e.device_name for e in rig.events if e.kind is EventKind.DEVICE_PAIRED] == ["Pixel"]


async def test_expired_pairing_code_is_refused(rig: Rig) -> None:
    rig.service.pairing.ttl_s = 0.05
    code = rig.service.new_pairing_code()
    await asyncio.sleep(0.1)
    async with rig.http.post(rig.base + "/api/v1/pair", json={"token": code.token}) as r:
        assert r.status == 401
    assert await rig.service.list_devices() == []


async def test_desktop_user_declines_or_nobody_answers(rig: Rig) -> None:
    rig.service.settings.auto_accept = False
    asked: list[str] = []

    async def decline(req: object) -> bool:
        asked.append(getattr(req, "name", ""))
        return False

    rig.service.accept_device = decline
    code = rig.service.new_pairing_code()
    async with rig.http.post(rig.base + "/api/v1/pair", json={"token": code.token, "name": "Stranger"}) as r:
        assert r.status == 403
        assert (await r.json())["code"] == "declined"
    assert asked == ["Stranger"]
    rig.service.accept_device = None  # no one to ask and no auto-accept: refuse
    code = rig.service.new_pairing_code()
    async with rig.http.post(rig.base + "/api/v1/pair", json={"token": code.token}) as r:
        assert r.status == 403
    assert await rig.service.list_devices() == []


async def test_pairing_attempts_are_rate_limited(rig: Rig) -> None:
    statuses = []
    for _ in range(7):
        async with rig.http.post(rig.base + "/api/v1/pair", json={"token": "guess"}) as r:
            statuses.append(r.status)
            retry = r.headers.get("Retry-After")
    assert statuses == [401] * 5 + [429] * 2
    assert retry is not None and 1 <= int(retry) <= 60
    code = rig.service.new_pairing_code()  # even a right code waits out the limit
    async with rig.http.post(rig.base + "/api/v1/pair", json={"token": code.token}) as r:
        assert r.status == 429


async def test_oversized_json_body_is_refused(rig: Rig) -> None:
    big = json.dumps({"token": "x" * 100_000})
    async with rig.http.post(rig.base + "/api/v1/pair", data=big, headers={"Content-Type": "application/json"}) as r:
        assert r.status == 413
    phone = await rig.pair()
    async with await phone.post("/api/v1/upload/prepare", data=big) as r:
        assert r.status == 413


# --- desktop -> phone ------------------------------------------------------------------------------------


async def offer(rig: Rig, phone: Phone, path: Path) -> tuple[str, str, str]:
    transfer = await rig.service.send_files([path], device_id=phone.device_id)
    f = next(iter(transfer.files.values()))
    return transfer.id, f.id, f.token


async def test_download_whole_and_resumed_with_range(rig: Rig, tmp_path: Path) -> None:
    phone = await rig.pair()
    src = make_file(tmp_path / "out", "video.mp4", 3_000_001)
    data = src.read_bytes()
    session, fid, token = await offer(rig, phone, src)
    url = f"/api/v1/download?session={session}&file={fid}&token={token}"
    async with await phone.get(url, headers={"Range": "bytes=0-999999"}) as r:
        assert r.status == 206
        first = await r.read()
    async with await phone.get(url, headers={"Range": "bytes=1000000-"}) as r:
        assert r.status == 206
        assert r.headers["Content-Range"] == f"bytes 1000000-3000000/{len(data)}"
        rest = await r.read()
    assert first + rest == data
    async with await phone.get(url) as r:
        assert r.status == 200
        assert r.headers["Content-Disposition"] == "attachment; filename*=UTF-8''video.mp4"
        assert r.headers["Accept-Ranges"] == "bytes"
        assert await r.read() == data


async def test_whole_browser_download_counts_as_sent_not_delivered(rig: Rig, tmp_path: Path) -> None:
    phone = await rig.pair()
    transfer = await rig.service.send_files([make_file(tmp_path / "o", "big.iso", 200_000)], device_id=phone.device_id)
    f = next(iter(transfer.files.values()))
    url = f"/api/v1/download?session={transfer.id}&file={f.id}&token={f.token}"
    async with await phone.get(url, headers={"Range": "bytes=0-99"}) as r:
        assert len(await r.read()) == 100
    await wait_for(lambda: f.served == 100)  # recorded when the server side has finished sending
    assert f.state is FileState.SENDING
    async with await phone.get(url) as r:  # a browser-managed download of the whole file
        assert len(await r.read()) == 200_000
    assert await transfer.wait(2)  # nothing more to wait for: the phone cannot confirm this one
    assert (f.state, f.served, f.phone_sha256) == (FileState.SENT, 200_000, "")


async def test_download_rejects_wrong_token_other_device_and_path_like_ids(rig: Rig, tmp_path: Path) -> None:
    phone, other = await rig.pair("mine"), await rig.pair("other")
    session, fid, token = await offer(rig, phone, make_file(tmp_path / "out", "a.txt", 10))
    async with await phone.get(f"/api/v1/download?session={session}&file={fid}&token=WRONG") as r:
        assert r.status == 403
    async with await other.get(f"/api/v1/download?session={session}&file={fid}&token={token}") as r:
        assert r.status == 404
    for s, f in [("../../etc", "passwd"), (session, "../a.txt"), (session, str(tmp_path / "out" / "a.txt"))]:
        async with await phone.get("/api/v1/download", params={"session": s, "file": f, "token": token}) as r:
            assert r.status == 404


async def test_file_changed_after_offer_fails_cleanly(rig: Rig, tmp_path: Path) -> None:
    phone = await rig.pair()
    src = make_file(tmp_path / "out", "notes.txt", 100)
    transfer = await rig.service.send_files([src], device_id=phone.device_id)
    f = next(iter(transfer.files.values()))
    src.write_bytes(b"changed")
    async with await phone.get(f"/api/v1/download?session={transfer.id}&file={f.id}&token={f.token}") as r:
        assert r.status == 410
    assert f.state is FileState.FAILED
    assert "changed" in f.error


async def test_ack_with_right_and_wrong_sha(rig: Rig, tmp_path: Path) -> None:
    phone = await rig.pair()
    a = make_file(tmp_path / "out", "a.bin", 1000)
    b = make_file(tmp_path / "out", "b.bin", 1000)
    transfer = await rig.service.send_files([a, b], device_id=phone.device_id)
    fa, fb = transfer.files.values()
    async with await phone.post("/api/v1/ack", json={"session": transfer.id, "file": fa.id, "token": fa.token}) as r:
        assert r.status == 400  # no sha256
    ok = {"session": transfer.id, "file": fa.id, "token": fa.token, "sha256": sha(a.read_bytes())}
    async with await phone.post("/api/v1/ack", json={**ok, "token": "bad"}) as r:
        assert r.status == 403
    async with await phone.post("/api/v1/ack", json=ok) as r:
        assert (await r.json())["state"] == "delivered"
    bad = {"session": transfer.id, "file": fb.id, "token": fb.token, "sha256": "0" * 64}
    async with await phone.post("/api/v1/ack", json=bad) as r:
        assert (await r.json())["state"] == "failed"
    assert await transfer.wait(1.0)
    assert (fa.state, fa.phone_sha256) == (FileState.DELIVERED, sha(a.read_bytes()))
    assert fb.state is FileState.FAILED and "SHA-256" in fb.error
    assert EventKind.DELIVERY_ACKNOWLEDGED.value in rig.kinds() and EventKind.TRANSFER_FAILED.value in rig.kinds()


async def test_events_stream_hello_offer_and_revoke(rig: Rig, tmp_path: Path) -> None:
    phone = await rig.pair()
    resp = await phone.get("/api/v1/events")
    assert resp.headers["Content-Type"] == "text/event-stream"

    async def next_event() -> tuple[str, dict[str, object]]:
        kind = ""
        while True:
            line = (await asyncio.wait_for(resp.content.readline(), 5)).decode().strip()
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: ") and kind:
                return kind, json.loads(line[6:])

    kind, hello = await next_event()
    assert kind == "hello" and hello["offers"] == [] and hello["desktop"] == "Test PC"
    await wait_for(lambda: rig.service.is_online(phone.device_id))
    src = make_file(tmp_path / "out", "x.txt", 5)
    transfer = await rig.service.send_files([src], device_id=phone.device_id)
    kind, offered = await next_event()
    assert kind == "offer" and offered["session"] == transfer.id
    assert offered["files"][0]["name"] == "x.txt"  # type: ignore[index]
    assert "path" not in offered["files"][0]  # type: ignore[operator,index]
    await rig.service.revoke(phone.device_id)
    kinds = []
    while True:
        k, _ = await next_event()
        kinds.append(k)
        if k == "revoked":
            break
    assert kinds[-1] == "revoked"
    assert transfer.cancelled
    resp.close()
    await wait_for(lambda: not rig.service.is_online(phone.device_id))


# --- phone -> desktop -------------------------------------------------------------------------------------


async def prepare(phone: Phone, files: list[dict[str, object]]) -> tuple[int, dict[str, object]]:
    async with await phone.post("/api/v1/upload/prepare", json={"files": files}) as r:
        return r.status, await r.json()


def incoming_files(rig: Rig) -> list[str]:
    return sorted(p.name for p in rig.incoming.iterdir() if p.is_file()) if rig.incoming.exists() else []


async def test_upload_verified_and_named_safely(rig: Rig) -> None:
    phone = await rig.pair()
    data = b"photo bytes " * 50_000
    status, body = await prepare(
        phone, [{"id": "p1", "name": "../../evil/照片.jpg", "size": len(data), "sha256": sha(data)}]
    )
    assert status == 200
    token = body["files"]["p1"]  # type: ignore[index]
    url = f"/api/v1/upload?session={body['session']}&file=p1&token={token}"
    async with await phone.post(url.replace(token, "bad"), data=data) as r:  # type: ignore[arg-type]
        assert r.status == 403
    async with await phone.post(url, data=data) as r:
        assert r.status == 200
        result = await r.json()
    assert result == {"file": "p1", "name": "照片.jpg", "size": len(data), "sha256": sha(data), "verified": True}
    assert (rig.incoming / "照片.jpg").read_bytes() == data
    async with await phone.post(url, data=data) as r:
        assert r.status == 404  # single use: the finished session is gone
    received = [e for e in rig.events if e.kind is EventKind.FILE_RECEIVED]
    assert received[0].data["sha256"] == sha(data) and received[0].device_name == "Test phone"


async def test_upload_sha_mismatch_is_rejected_and_leaves_nothing(rig: Rig) -> None:
    phone = await rig.pair()
    data = b"a" * 1000
    _, body = await prepare(phone, [{"id": "f", "name": "doc.pdf", "size": 1000, "sha256": "1" * 64}])
    url = f"/api/v1/upload?session={body['session']}&file=f&token={body['files']['f']}"  # type: ignore[index]
    async with await phone.post(url, data=data) as r:
        assert r.status == 422
        assert (await r.json())["code"] == "sha_mismatch"
    assert incoming_files(rig) == []
    assert list(partial_dir(rig.incoming).iterdir()) == []


async def test_upload_limits(rig: Rig) -> None:
    phone = await rig.pair()
    too_big = 65 << 20  # the rig's limit is 64 MB
    status, body = await prepare(phone, [{"id": "f", "name": "big.iso", "size": too_big}])
    assert (status, body["code"]) == (413, "too_large")
    rig.service.settings.max_upload_mb = 1 << 30  # 1 PB allowed: now the disk-space check decides
    status, body = await prepare(phone, [{"id": "f", "name": "huge.iso", "size": 1 << 49}])
    assert (status, body["code"]) == (507, "no_space")
    for bad_id in ["../x", "a/b", "", "x" * 65, "C:\\x"]:
        status, body = await prepare(phone, [{"id": bad_id, "name": "x", "size": 1}])
        assert (status, body["code"]) == (400, "bad_id"), bad_id
    status, _ = await prepare(phone, [{"id": "a", "name": "x", "size": 1}, {"id": "a", "name": "y", "size": 1}])
    assert status == 400
    status, body = await prepare(phone, [{"id": "f", "name": "x.txt", "size": 10}])
    url = f"/api/v1/upload?session={body['session']}&file=f&token={body['files']['f']}"  # type: ignore[index]
    async with await phone.post(url, data=b"x" * 11) as r:
        assert r.status == 413  # longer than declared
    async with await phone.post(url, data=b"x" * 9) as r:
        assert r.status == 400  # shorter than declared

    async def longer_than_declared() -> bytes:  # no Content-Length: caught while streaming
        yield b"x" * 11  # type: ignore[misc]

    async with await phone.post(url, data=longer_than_declared()) as r:
        assert r.status == 413
    assert incoming_files(rig) == []
    assert list(partial_dir(rig.incoming).iterdir()) == []


async def test_upload_cut_off_midway_leaves_no_partial_file(rig: Rig) -> None:
    phone = await rig.pair()
    size = 8 << 20
    _, body = await prepare(phone, [{"id": "f", "name": "cut.bin", "size": size}])
    path = f"/api/v1/upload?session={body['session']}&file=f&token={body['files']['f']}"  # type: ignore[index]
    _reader, writer = await asyncio.open_connection("127.0.0.1", rig.service.port)
    writer.write(
        (
            f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {phone.token}\r\n"
            f"Content-Length: {size}\r\nContent-Type: application/octet-stream\r\n\r\n"
        ).encode()
    )
    writer.write(b"z" * (5 << 20))
    await writer.drain()
    await wait_for(lambda: partial_dir(rig.incoming).exists() and any(partial_dir(rig.incoming).iterdir()))
    writer.close()  # the phone lost its connection
    await wait_for(lambda: not any(partial_dir(rig.incoming).iterdir()))
    assert incoming_files(rig) == []
    # the same file can be sent again afterwards
    async with await phone.post(path, data=b"q" * size) as r:
        assert r.status == 200
    assert incoming_files(rig) == ["cut.bin"]


async def test_cancel_from_phone_declines_offer(rig: Rig, tmp_path: Path) -> None:
    phone = await rig.pair()
    transfer = await rig.service.send_files([make_file(tmp_path / "o", "a.txt", 3)], device_id=phone.device_id)
    async with await phone.post("/api/v1/cancel", json={"session": "nope"}) as r:
        assert r.status == 404
    async with await phone.post("/api/v1/cancel", json={"session": transfer.id}) as r:
        assert r.status == 200
    assert await transfer.wait(0.5)
    f = next(iter(transfer.files.values()))
    assert (f.state, f.error) == (FileState.CANCELLED, "declined on the phone")
    async with await phone.get(f"/api/v1/download?session={transfer.id}&file={f.id}&token={f.token}") as r:
        assert r.status == 410


# --- lifecycle -----------------------------------------------------------------------------------------


async def test_restart_on_another_port_reinjects_the_bridge(rig: Rig) -> None:
    from weclaw_desktop.companion import attach_to_registry

    injected: list[object] = []
    detach = attach_to_registry(rig.service, lambda b: injected.append(b["companion"]))
    assert injected == [rig.service]
    phone = await rig.pair()
    old = rig.service.port
    await rig.service.stop()
    assert injected[-1] is None
    with pytest.raises(aiohttp.ClientConnectionError):
        async with rig.http.get(f"http://127.0.0.1:{old}/"):
            pass
    await rig.service.start("127.0.0.1", 0)
    assert injected[-1] is rig.service
    phone.base = rig.service.base_url
    async with await phone.get("/api/v1/me") as r:
        assert r.status == 200  # pairings survive a restart
    detach()
    await rig.service.stop()
    assert injected[-1] is rig.service  # detached: no more injections
    await rig.service.start("127.0.0.1", 0)


async def test_partials_from_a_crash_are_cleaned_on_start(rig: Rig) -> None:
    folder = partial_dir(rig.incoming)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "old.part").write_bytes(b"x")
    await rig.service.start("127.0.0.1", 0)
    assert list(folder.iterdir()) == []


async def test_devices_list_and_last_seen(rig: Rig) -> None:
    before = time.time()
    phone = await rig.pair("Mate 60")
    devices = await rig.service.list_devices()
    assert [(d.name, d.online) for d in devices] == [("Mate 60", False)]
    assert devices[0].last_seen >= before
    assert devices[0].id == phone.device_id
