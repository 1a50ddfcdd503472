"""The phone-facing HTTP API against a real server on 127.0.0.1: the page, signed requests, transfers."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from companion_helpers import Refused, Rig, make_file, sha, wait_for

from weclaw_desktop.companion import EventKind, FileState
from weclaw_desktop.companion import crypto as c
from weclaw_desktop.companion.transfers import partial_dir

SIGNED = [
    ("POST", "/api/v1/state"),
    ("GET", "/api/v1/events"),
    ("GET", "/api/v1/download?o=a&f=b&from=0"),
    ("POST", "/api/v1/ack"),
    ("POST", "/api/v1/upload/prepare"),
    ("POST", "/api/v1/upload/status"),
    ("POST", "/api/v1/upload?u=a&f=b&from=0"),
    ("POST", "/api/v1/cancel"),
    ("POST", "/api/v1/unpair"),
]


# --- the page ------------------------------------------------------------------------------------------


async def test_page_is_served_with_strict_headers_and_no_cors(rig: Rig) -> None:
    """The page and its modules come with a strict CSP, no CORS; the vendored libraries are served from the
    manifest only."""
    async with rig.http.get(rig.base + "/", headers={"Origin": "http://evil.example"}) as r:
        assert r.status == 200
        assert "<title>WeClaw</title>" in await r.text()
        assert "script-src 'self'" in r.headers["Content-Security-Policy"]
        assert r.headers["X-Content-Type-Options"] == "nosniff"
        assert not [h for h in r.headers if h.lower().startswith("access-control-")]
    for asset in ("/app.js", "/proto.js", "/store.js", "/zip.js", "/i18n.js", "/app.css"):
        async with rig.http.get(rig.base + asset) as r:
            assert r.status == 200, asset
    async with rig.http.get(rig.base + "/vendor/noble-ciphers/chacha.js") as r:
        assert r.status == 200 and r.headers["Content-Type"].startswith("text/javascript")
    async with rig.http.options(
        rig.base + "/api/v1/upload/prepare",
        headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"},
    ) as r:
        assert r.status in (403, 405)  # a preflight from another page gets no CORS answer
        assert not [h for h in r.headers if h.lower().startswith("access-control-")]


@pytest.mark.parametrize(
    "path",
    [
        "/static/",
        "/resources/companion/",
        "/../tools.json",
        "/app.js/..%2f..%2fREADME.md",
        "/vendor/",
        "/vendor/VENDORED.json",
        "/vendor/noble-ciphers/aes.js",
    ],
)
async def test_no_directory_listing_or_other_files(rig: Rig, path: str) -> None:
    async with rig.http.get(rig.base + path) as r:
        assert r.status == 404


# --- authentication -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path"), SIGNED)
async def test_every_api_call_needs_a_signature(rig: Rig, method: str, path: str) -> None:
    """Without a valid signature nothing is answered but a refusal (no bearer token exists to steal)."""
    ctype = "application/octet-stream" if path.startswith("/api/v1/upload?") else "application/json"
    body = b"\0" * 16 if ctype.endswith("stream") else b"{}"
    for auth in ("", "nope", f"{'A' * 22}.ctl.1.{'A' * 43}"):
        headers = {"Content-Type": ctype, "X-WeClaw-Auth": auth} if auth else {"Content-Type": ctype}
        async with rig.http.request(method, rig.base + path, data=body, headers=headers) as r:
            assert r.status == 401, (path, auth)
            assert (await r.json())["code"] in ("auth", "session")


async def test_a_signature_covers_method_path_and_body(rig: Rig, tmp_path: Path) -> None:
    """A valid signature moved to another path, method or body is refused."""
    phone = await rig.pair()
    await phone.open_session()
    raw = json.dumps(c.seal(phone.c2s, b"{}", "weclaw/v1/req|POST|/api/v1/state|ctl|1")).encode()
    headers, _ = phone.sign("POST", "/api/v1/state", "ctl", c.digest(raw))
    headers["Content-Type"] = "application/json"
    for path, body in [("/api/v1/upload/prepare", raw), ("/api/v1/state", raw + b" ")]:
        async with rig.http.post(rig.base + path, data=body, headers=headers) as r:
            assert r.status == 401 and (await r.json())["code"] == "auth", path
    async with rig.http.post(rig.base + "/api/v1/state", data=raw, headers=headers) as r:
        assert r.status == 200  # the same signature where it belongs


async def test_answers_are_sealed_and_bound_to_their_request(rig: Rig, tmp_path: Path) -> None:
    """Everything a signed call returns is sealed; file names and keys never appear in clear."""
    phone = await rig.pair()
    await rig.service.send_files([make_file(tmp_path / "o", "秘密报告.pdf", 100)], device_id=phone.device_id)
    await phone.open_session()
    raw = json.dumps(c.seal(phone.c2s, b"{}", "weclaw/v1/req|POST|/api/v1/state|ctl|1")).encode()
    headers, seq = phone.sign("POST", "/api/v1/state", "ctl", c.digest(raw))
    async with rig.http.post(
        rig.base + "/api/v1/state", data=raw, headers={**headers, "Content-Type": "application/json"}
    ) as r:
        text = await r.text()
    assert "秘密" not in text and "pdf" not in text and set(json.loads(text)) == {"n", "c"}
    with pytest.raises(c.CryptoError):  # an answer taken for another request does not open
        c.open_sealed(phone.s2c, json.loads(text), "weclaw/v1/resp|ctl|2|200")
    assert phone.unseal("ctl", seq, 200, json.loads(text))["offers"][0]["files"][0]["name"] == "秘密报告.pdf"


# --- desktop -> phone ------------------------------------------------------------------------------------


async def test_download_whole_and_resumed_by_record(rig: Rig, tmp_path: Path) -> None:
    """A 3.2 MB file arrives as four records; a resumed download starts at the record asked for."""
    phone = await rig.pair()
    src = make_file(tmp_path / "out", "video.mp4", 3 * c.RECORD + 123)
    data = src.read_bytes()
    await rig.service.send_files([src], device_id=phone.device_id)
    offer = (await phone.offers())[0]
    f = offer["files"][0]
    assert f["records"] == 4 and f["size"] == len(data) and "path" not in f
    assert await phone.download(offer["offer"], f) == data
    assert await phone.download(offer["offer"], f, first=2) == data[2 * c.RECORD :]
    assert await phone.download(offer["offer"], f, first=4) == b""
    with pytest.raises(Refused) as bad:
        await phone.download(offer["offer"], f, first=5)
    assert bad.value.status == 400


async def test_a_changed_record_a_swapped_record_and_a_cut_body_do_not_open(rig: Rig, tmp_path: Path) -> None:
    """Records are bound to their file, index, count and size: a flipped bit, a record moved to another
    index or file, and a body cut inside a record all fail."""
    phone = await rig.pair()
    a, b = make_file(tmp_path, "a.bin", 2 * c.RECORD + 10), make_file(tmp_path, "b.bin", 2 * c.RECORD + 10)
    await rig.service.send_files([a, b], device_id=phone.device_id)
    offer = (await phone.offers())[0]
    fa, fb = offer["files"]
    headers, _ = phone.sign(
        "GET", f"/api/v1/download?o={offer['offer']}&f={fa['id']}&from=0", f"dl:{fa['id']}", c.digest(b"")
    )
    async with rig.http.get(
        rig.base + f"/api/v1/download?o={offer['offer']}&f={fa['id']}&from=0", headers=headers
    ) as r:
        raw = await r.read()
    salt, body = raw[: c.SALT], raw[c.SALT :]
    recs = list(c.split_records(body, fa["size"], 0))
    sealer = c.RecordSealer(c.b64d(fa["key"]), fa["id"], fa["size"], salt)
    assert sealer.open(0, recs[0][1]) == a.read_bytes()[: c.RECORD]
    flipped = bytearray(recs[0][1])
    flipped[1000] ^= 0x04
    with pytest.raises(c.CryptoError):
        sealer.open(0, bytes(flipped))
    with pytest.raises(c.CryptoError):
        sealer.open(1, recs[0][1])  # moved to another index
    with pytest.raises(c.CryptoError):
        c.RecordSealer(c.b64d(fa["key"]), fb["id"], fb["size"], salt).open(0, recs[0][1])  # to another file
    with pytest.raises(c.CryptoError):
        sealer.open(2, recs[2][1][:-1])  # the last record cut short
    with pytest.raises(c.CryptoError):
        list(c.split_records(body[:-5], fa["size"], 0))


async def test_a_resent_record_never_reuses_a_key_nonce_pair(rig: Rig, tmp_path: Path) -> None:
    """Each response has its own salt, so the same record resent is sealed under a different key."""
    phone = await rig.pair()
    await rig.service.send_files([make_file(tmp_path, "x.bin", 1000)], device_id=phone.device_id)
    offer = (await phone.offers())[0]
    f = offer["files"][0]
    bodies = []
    for _ in range(2):
        path = f"/api/v1/download?o={offer['offer']}&f={f['id']}&from=0"
        headers, _ = phone.sign("GET", path, f"dl:{f['id']}", c.digest(b""))
        async with rig.http.get(rig.base + path, headers=headers) as r:
            bodies.append(await r.read())
    assert bodies[0][: c.SALT] != bodies[1][: c.SALT] and bodies[0][c.SALT :] != bodies[1][c.SALT :]


async def test_delivered_only_when_the_phone_reports_the_save(rig: Rig, tmp_path: Path) -> None:
    """Streaming every record is not delivery; holding the file is 'ready'; only 'saved' is delivered."""
    phone = await rig.pair()
    src = make_file(tmp_path / "o", "doc.pdf", 200_000)
    transfer = await rig.service.send_files([src], device_id=phone.device_id)
    f = next(iter(transfer.files.values()))
    offer = (await phone.offers())[0]
    assert await phone.download(offer["offer"], offer["files"][0]) == src.read_bytes()
    assert f.state is FileState.SENDING and f.served == 1
    assert not await transfer.wait(0.2)
    await phone.call("/api/v1/ack", {"offer": transfer.id, "file": f.id, "state": "ready"})
    assert f.state is FileState.READY and EventKind.FILE_READY.value in rig.kinds()
    assert EventKind.DELIVERY_ACKNOWLEDGED.value not in rig.kinds()
    got = await phone.call("/api/v1/ack", {"offer": transfer.id, "file": f.id, "state": "saved"})
    assert got["state"] == "delivered" and f.state is FileState.DELIVERED
    assert await transfer.wait(0.5)
    delivered = [e for e in rig.events if e.kind is EventKind.DELIVERY_ACKNOWLEDGED]
    assert delivered[0].data["sha256"] == sha(src.read_bytes())


async def test_ack_items_and_failures(rig: Rig, tmp_path: Path) -> None:
    """Several files saved as one ZIP are reported in one call; a phone's failure is kept with its reason."""
    phone = await rig.pair()
    paths = [make_file(tmp_path / "o", f"{i}.txt", 10) for i in range(3)]
    transfer = await rig.service.send_files(paths, device_id=phone.device_id)
    ids = [f.id for f in sorted(transfer.files.values(), key=lambda f: f.seq)]
    items = [{"offer": transfer.id, "file": i, "state": "saved"} for i in ids[:2]]
    got = await phone.call("/api/v1/ack", {"items": items})
    assert set(got["states"].values()) == {"delivered"}
    await phone.call("/api/v1/ack", {"offer": transfer.id, "file": ids[2], "state": "failed", "reason": "storage full"})
    assert transfer.files[ids[2]].error == "the phone reported: storage full"
    with pytest.raises(Refused) as bad:
        await phone.call("/api/v1/ack", {"offer": transfer.id, "file": ids[0], "state": "great"})
    assert bad.value.code == "bad_request"
    assert await transfer.wait(0.5)


async def test_other_devices_and_path_like_ids_find_nothing(rig: Rig, tmp_path: Path) -> None:
    phone, other = await rig.pair("mine"), await rig.pair("other")
    transfer = await rig.service.send_files([make_file(tmp_path / "out", "a.txt", 10)], device_id=phone.device_id)
    f = {"id": next(iter(transfer.files)), "key": c.b64e(b"\0" * 32), "size": 10}
    with pytest.raises(Refused) as bad:
        await other.download(transfer.id, f)
    assert bad.value.code == "not_found"
    for o, fid in [("../../etc", "passwd"), (transfer.id, "..%2fa.txt")]:
        with pytest.raises(Refused) as bad:
            await phone.download(o, {"id": fid, "key": f["key"], "size": 10})
        assert bad.value.status in (400, 401, 404)
    assert await other.offers() == []


async def test_file_changed_after_offer_fails_cleanly(rig: Rig, tmp_path: Path) -> None:
    phone = await rig.pair()
    src = make_file(tmp_path / "out", "notes.txt", 100)
    transfer = await rig.service.send_files([src], device_id=phone.device_id)
    offer = (await phone.offers())[0]
    src.write_bytes(b"changed")
    with pytest.raises(Refused) as bad:
        await phone.download(offer["offer"], offer["files"][0])
    assert bad.value.code == "changed"
    f = next(iter(transfer.files.values()))
    assert f.state is FileState.FAILED and "changed" in f.error


async def test_cancel_from_phone_declines_offer(rig: Rig, tmp_path: Path) -> None:
    phone = await rig.pair()
    transfer = await rig.service.send_files([make_file(tmp_path / "o", "a.txt", 3)], device_id=phone.device_id)
    with pytest.raises(Refused):
        await phone.call("/api/v1/cancel", {"id": "nope"})
    assert (await phone.call("/api/v1/cancel", {"id": transfer.id}))["cancelled"]
    assert await transfer.wait(0.5)
    f = next(iter(transfer.files.values()))
    assert (f.state, f.error) == (FileState.CANCELLED, "declined on the phone")


# --- phone -> desktop -------------------------------------------------------------------------------------


def incoming_files(rig: Rig) -> list[str]:
    return sorted(p.name for p in rig.incoming.iterdir() if p.is_file()) if rig.incoming.exists() else []


async def test_upload_is_authenticated_and_named_safely(rig: Rig) -> None:
    """A 2.5 MB upload arrives byte-exact under a safe name; the desktop reports its own SHA-256."""
    phone = await rig.pair()
    data = os.urandom(2_500_000)
    result = await phone.send("../../evil/照片.jpg", data)
    assert result == {"file": "f1", "name": "照片.jpg", "size": len(data), "sha256": sha(data), "done": True}
    assert (rig.incoming / "照片.jpg").read_bytes() == data
    received = [e for e in rig.events if e.kind is EventKind.FILE_RECEIVED]
    assert received[0].data["sha256"] == sha(data) and received[0].device_name == "Test phone"
    assert list(partial_dir(rig.incoming).iterdir()) == []


async def test_upload_record_that_does_not_authenticate_writes_nothing(rig: Rig) -> None:
    """A tampered record is refused; nothing lands in the incoming folder; the right record then goes in."""
    phone = await rig.pair()
    data = os.urandom(c.RECORD + 5)
    prepared = await phone.call(
        "/api/v1/upload/prepare", {"files": [{"id": "f", "name": "doc.pdf", "size": len(data)}]}
    )
    key = c.b64d(prepared["files"]["f"])
    wrong = c.b64e(b"\1" * 32)
    with pytest.raises(Refused) as bad:
        await phone.upload(prepared["upload"], "f", c.b64d(wrong), data)
    assert bad.value.code == "damaged"
    assert incoming_files(rig) == []
    status = await phone.call("/api/v1/upload/status", {"upload": prepared["upload"]})
    assert status["files"]["f"]["received"] == 0
    assert (await phone.upload(prepared["upload"], "f", key, data))["done"]
    assert (rig.incoming / "doc.pdf").read_bytes() == data


async def test_upload_order_and_limits(rig: Rig) -> None:
    phone = await rig.pair()
    too_big = 65 << 20  # the rig's limit is 64 MB
    with pytest.raises(Refused) as bad:
        await phone.call("/api/v1/upload/prepare", {"files": [{"id": "f", "name": "big.iso", "size": too_big}]})
    assert (bad.value.status, bad.value.code) == (413, "too_large")
    rig.service.settings.max_upload_mb = 1 << 30  # 1 PB allowed: now the reservation cap decides
    with pytest.raises(Refused) as bad:
        await phone.call("/api/v1/upload/prepare", {"files": [{"id": "f", "name": "huge.iso", "size": 1 << 49}]})
    assert (bad.value.status, bad.value.code) == (507, "reserve")
    for bad_id in ["../x", "a/b", "", "x" * 65, "C:\\x", 5]:
        with pytest.raises(Refused) as bad:
            await phone.call("/api/v1/upload/prepare", {"files": [{"id": bad_id, "name": "x", "size": 1}]})
        assert (bad.value.status, bad.value.code) == (400, "bad_id"), bad_id
    data = os.urandom(2 * c.RECORD)
    prepared = await phone.call("/api/v1/upload/prepare", {"files": [{"id": "f", "name": "x.bin", "size": len(data)}]})
    key = c.b64d(prepared["files"]["f"])
    with pytest.raises(Refused) as bad:
        await phone.upload(prepared["upload"], "f", key, data, first=1)  # record 0 first
    assert bad.value.code == "order" and bad.value.body["received"] == 0
    assert (await phone.upload(prepared["upload"], "f", key, data, first=0, n=1))["received"] == 1
    assert (await phone.upload(prepared["upload"], "f", key, data, first=1))["done"]
    with pytest.raises(Refused) as bad:
        await phone.upload(prepared["upload"], "f", key, data, first=0)
    assert bad.value.status in (404, 410)
    assert (rig.incoming / "x.bin").read_bytes() == data


async def test_an_empty_file_goes_both_ways(rig: Rig, tmp_path: Path) -> None:
    phone = await rig.pair()
    assert (await phone.send("empty.txt", b""))["done"]
    assert (rig.incoming / "empty.txt").read_bytes() == b""
    await rig.service.send_files([make_file(tmp_path, "none.txt", 0)], device_id=phone.device_id)
    offer = (await phone.offers())[0]
    assert offer["files"][0]["records"] == 1
    assert await phone.download(offer["offer"], offer["files"][0]) == b""


# --- lifecycle -----------------------------------------------------------------------------------------


async def test_restart_on_another_port_reinjects_the_bridge(rig: Rig) -> None:
    from weclaw_desktop.companion import attach_to_registry

    injected: list[object] = []
    detach = attach_to_registry(rig.service, lambda b: injected.append(b["companion"]))
    assert injected == [rig.service]
    phone = await rig.pair()
    await phone.call("/api/v1/state")
    await rig.service.stop()
    assert injected[-1] is None
    await rig.service.start("127.0.0.1", 0)
    assert injected[-1] is rig.service
    phone.base = rig.service.base_url
    with pytest.raises(Refused) as gone:
        await phone.call("/api/v1/state")  # the session did not survive
    assert gone.value.code == "session"
    await phone.open_session()  # the pairing did
    assert (await phone.call("/api/v1/state"))["device"]["id"] == phone.device_id
    detach()
    await rig.service.stop()
    assert injected[-1] is rig.service  # detached: no more injections
    await rig.service.start("127.0.0.1", 0)


async def test_devices_list_and_online(rig: Rig) -> None:
    phone = await rig.pair("Mate 60")
    devices = await rig.service.list_devices()
    assert [(d.name, d.online) for d in devices] == [("Mate 60", False)]
    assert devices[0].id == phone.device_id
    await phone.open_session()
    path = "/api/v1/events"
    headers, _ = phone.sign("GET", path, "ev", c.digest(b""))
    async with rig.http.get(rig.base + path, headers=headers) as r:
        await wait_for(lambda: rig.service.is_online(phone.device_id))
        assert (await rig.service.list_devices())[0].online
        r.close()
    await wait_for(lambda: not rig.service.is_online(phone.device_id))
