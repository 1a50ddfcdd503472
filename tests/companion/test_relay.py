"""Real Chromium (Pixel 7) talking to the desktop through a recording relay on loopback: what someone on the
same Wi-Fi sees and can do. The capture must hold no file bytes, no file names, no key, and nothing that
makes an accepted request when replayed; a bit flipped in flight is refused and the transfer still ends
byte-exact. A page reached under a rebinding name is refused."""

from __future__ import annotations

import asyncio
import json
import os
import random
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from browser import Browser, PhoneTab, chromium_available
from companion_helpers import Rig, make_file, wait_for
from relay import Conn, Relay, replay, request_target

from weclaw_desktop.companion import EventKind, FileState
from weclaw_desktop.companion import crypto as c

pytestmark = pytest.mark.skipif(not chromium_available(), reason="needs /usr/bin/chromium and playwright")

PUBLIC = {"/", "/app.js", "/proto.js", "/store.js", "/zip.js", "/i18n.js", "/app.css", "/favicon.ico"}


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    b = Browser()
    yield b
    b.close()


@pytest.fixture
async def relay(rig: Rig) -> AsyncIterator[Relay]:
    r = Relay("127.0.0.1", rig.service.port)
    await r.start()
    rig.service.advertise("127.0.0.1", r.port)  # the QR code and the Host check now name the relay
    yield r
    await r.stop()


async def pair_through(rig: Rig, browser: Browser, device: str = "Pixel 7") -> tuple[PhoneTab, str, str]:
    code = rig.service.new_pairing_code()
    tab = await browser.run(browser.open_phone, code.url, "en-US", None, device)
    await browser.run(tab.page.wait_for_selector, "#send-card:not([hidden])")
    device_id = (await rig.service.list_devices())[0].id
    await wait_for(lambda: rig.service.is_online(device_id), within=10)
    return tab, device_id, c.b64e(code.secret)


def windows(data: bytes, n: int = 300, width: int = 48) -> list[bytes]:
    rnd = random.Random(1)
    return [data[o : o + width] for o in (rnd.randrange(0, len(data) - width) for _ in range(n))]


async def test_the_capture_holds_no_file_no_name_no_key_and_replays_nothing(
    rig: Rig, relay: Relay, browser: Browser, tmp_path: Path
) -> None:
    tab, device_id, secret = await pair_through(rig, browser)
    out_name, in_name = "年度报告-机密.pdf", "IMG_private_photo.jpg"
    src = make_file(tmp_path / "docs", out_name, 2 * c.RECORD + 4321)
    transfer = await rig.service.send_files([src], device_id=device_id)
    await browser.run(tab.page.wait_for_selector, f"#incoming li[data-file='{out_name}'] button")
    await browser.run(tab.tap, out_name)  # Download
    await browser.run(tab.wait_state, out_name, "ready")
    await browser.run(tab.tap, out_name)  # Save
    saved = await browser.run(tab.save_download, out_name, tmp_path / "phone.pdf")
    assert saved.read_bytes() == src.read_bytes()
    assert await transfer.wait(10)
    photo = os.urandom(1_500_000)
    await browser.run(tab.page.set_input_files, "#pick", {"name": in_name, "mimeType": "image/jpeg", "buffer": photo})
    await browser.run(tab.wait_state, in_name, "sent", "#outgoing")
    assert (rig.incoming / in_name).read_bytes() == photo
    creds = await browser.run(tab.page.evaluate, "window.weclaw.state()")
    assert creds["paired"]
    await browser.run(tab.context.close)

    seen = relay.everything()
    assert len(seen) > 3_500_000  # the files did cross the relay
    for name in (out_name, in_name):
        for form in (name.encode(), quote(name).encode(), json.dumps(name).encode(), name.split(".")[0].encode()):
            assert form not in seen, form
    for data in (src.read_bytes(), photo):
        assert not [w for w in windows(data) if w in seen]
    assert secret.encode() not in seen and c.b64d(secret) not in seen
    device = await rig.service.device(device_id)
    assert device is not None
    key = rig.service.master.device_key(device.id, device.key_gen, device.key_salt)
    assert key not in seen and c.b64e(key).encode() not in seen
    assert b"Authorization" not in seen and b"Cookie" not in seen

    requests = relay.captured_requests()
    api = [r for r in requests if request_target(r)[1].startswith("/api/")]
    assert all(
        request_target(r)[1] in PUBLIC or request_target(r)[1].startswith("/vendor/") for r in requests if r not in api
    )
    assert {request_target(r)[1].split("?")[0] for r in api} >= {
        "/api/v1/pair",
        "/api/v1/hello",
        "/api/v1/session",
        "/api/v1/state",
        "/api/v1/events",
        "/api/v1/download",
        "/api/v1/ack",
        "/api/v1/upload/prepare",
        "/api/v1/upload",
    }
    for raw in api:
        status = await replay("127.0.0.1", relay.port, raw)
        path = request_target(raw)[1]
        if path == "/api/v1/hello":
            assert status == 200  # anyone may ask for a challenge: it grants nothing by itself
        else:
            assert 400 <= status < 500, (path, status)
    assert len([e for e in rig.events if e.kind is EventKind.FILE_RECEIVED]) == 1  # nothing was received twice
    assert [p.name for p in rig.incoming.iterdir() if p.is_file()] == [in_name]


def flip_once(path_part: bytes, direction: str, at: int) -> Any:
    """A tamper function flipping one bit ``at`` bytes into the body of the first matching request/response."""
    state = {"done": False}

    def tamper(conn: Conn, dir_: str, data: bytes, offset: int) -> bytes:
        if state["done"] or dir_ != direction:
            return data
        if direction == "down" and path_part not in bytes(conn.up)[-2000:]:
            return data
        stream = (conn.down if direction == "down" else conn.up) + data
        head = stream.rfind(b"\r\n\r\n") if direction == "down" else stream.find(path_part)
        if head < 0:
            return data
        body = stream.find(b"\r\n\r\n", head) + 4 if direction == "up" else head + 4
        target = body + at
        if offset <= target < offset + len(data):
            buf = bytearray(data)
            buf[target - offset] ^= 0x10
            state["done"] = True
            return bytes(buf)
        return data

    tamper.state = state  # type: ignore[attr-defined]
    return tamper


async def test_a_flipped_bit_in_a_download_is_refused_and_fetched_again(
    rig: Rig, relay: Relay, browser: Browser, tmp_path: Path
) -> None:
    tab, device_id, _ = await pair_through(rig, browser)
    relay.tamper = flip_once(b"GET /api/v1/download", "down", 200_000)
    src = make_file(tmp_path, "data.bin", 3 * c.RECORD)
    transfer = await rig.service.send_files([src], device_id=device_id)
    await browser.run(tab.page.click, "#auto")  # fetch without a tap
    await browser.run(tab.wait_state, "data.bin", "ready")
    assert relay.tamper.state["done"]  # type: ignore[union-attr]
    downloads = [r for r in relay.captured_requests() if request_target(r)[1].startswith("/api/v1/download")]
    assert len(downloads) >= 2 and request_target(downloads[1])[1].endswith("from=0")  # record 0 was refused
    assert next(iter(transfer.files.values())).state is FileState.READY  # held, but not saved: not delivered
    await browser.run(tab.tap, "data.bin")
    saved = await browser.run(tab.save_download, "data.bin", tmp_path / "got.bin")
    assert saved.read_bytes() == src.read_bytes()
    assert await transfer.wait(10)
    await browser.run(tab.context.close)


async def test_a_flipped_bit_in_an_upload_is_refused_and_sent_again(
    rig: Rig, relay: Relay, browser: Browser, tmp_path: Path
) -> None:
    tab, _, _ = await pair_through(rig, browser)
    relay.tamper = flip_once(b"POST /api/v1/upload?", "up", 300_000)
    photo = os.urandom(2 * c.RECORD + 99)
    await browser.run(tab.page.set_input_files, "#pick", {"name": "pic.jpg", "mimeType": "image/jpeg", "buffer": photo})
    await browser.run(tab.wait_state, "pic.jpg", "sent", "#outgoing")
    assert relay.tamper.state["done"]  # type: ignore[union-attr]
    assert (rig.incoming / "pic.jpg").read_bytes() == photo
    uploads = [r for r in relay.captured_requests() if request_target(r)[1].startswith("/api/v1/upload?")]
    assert len(uploads) >= 2
    await browser.run(tab.context.close)


async def test_a_rebinding_name_gets_no_page(rig: Rig) -> None:
    """Chromium resolving rebind.test to the desktop (as a DNS-rebinding attacker arranges) gets 421."""
    b = await asyncio.to_thread(Browser, ["--host-resolver-rules=MAP rebind.test 127.0.0.1"])
    try:

        def visit() -> tuple[int, str, bool]:
            context = b.browser.new_context(
                **{k: v for k, v in b.devices["Pixel 7"].items() if k != "default_browser_type"}
            )
            page = context.new_page()
            resp = page.goto(f"http://rebind.test:{rig.service.port}/")
            assert resp is not None
            ran = page.evaluate("typeof window.weclaw !== 'undefined'")
            out = (resp.status, page.content(), ran)
            context.close()
            return out

        status, html, ran = await b.run(visit)
        assert status == 421 and "bad_host" in html and not ran
    finally:
        await asyncio.to_thread(b.close)
