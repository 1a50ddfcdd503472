"""The phone page in real headless Chromium (Pixel 7 and iPhone profiles) against a real server on 127.0.0.1:
pairing, honest delivery (held vs saved, one tap or one ZIP), history kept across reloads, uploads with
Retry, two phones, revocation, expiry, Unpair, pairing again, and the page's two languages."""

from __future__ import annotations

import asyncio
import io
import json
import os
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import Browser, PhoneTab, chromium_available
from companion_helpers import Rig, make_file, sha, wait_for
from fakeclock import FakeClock
from toolrun import Direct

from weclaw_desktop.companion import EventKind, FileState
from weclaw_desktop.companion.devices import KEY_LIFETIME_S
from weclaw_desktop.companion.limits import Limits
from weclaw_desktop.paths import tools_json_path
from weclaw_desktop.toolkit.base import ToolContext, ToolStatus
from weclaw_desktop.toolkit.dispatcher import ToolCall
from weclaw_desktop.toolkit.manifest import load_manifest
from weclaw_desktop.toolkit.registry import ToolRegistry

pytestmark = pytest.mark.skipif(not chromium_available(), reason="needs /usr/bin/chromium and playwright")
IPHONE = "iPhone 14"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    b = Browser()
    yield b
    b.close()


async def paired_phone(
    rig: Rig, browser: Browser, *, locale: str = "en-US", device: str = "Pixel 7"
) -> tuple[PhoneTab, str]:
    before = {d.id for d in await rig.service.list_devices()}
    code = rig.service.new_pairing_code()
    tab = await browser.run(browser.open_phone, code.url, locale, None, device)
    await browser.run(tab.page.wait_for_selector, "#send-card:not([hidden])")
    device_id = next(d.id for d in await rig.service.list_devices() if d.id not in before)
    await wait_for(lambda: rig.service.is_online(device_id), within=10)
    return tab, device_id


def states(tab: PhoneTab) -> dict[str, str]:
    return {f["name"]: f["state"] for f in tab.state()["files"]}


async def test_the_tool_reports_held_then_saved(rig: Rig, browser: Browser, tmp_path: Path) -> None:
    """The agent's send_file: the phone fetches it ('ready', not delivered); the user's tap saves it and only
    then is it delivered, byte-exact. The secret left the address bar at once."""
    tab, device_id = await paired_phone(rig, browser)
    assert await browser.run(tab.page.evaluate, "location.hash") == ""
    src = make_file(tmp_path / "docs", "report.pdf", 5_000_000)
    reg = ToolRegistry(load_manifest(tools_json_path()), config_overrides={"remote_file_share": {"tap_wait_s": 60}})
    reg.inject({"companion": rig.service})
    ctx = ToolContext(outputs_dir=tmp_path / "out", data_dir=tmp_path, db=None, allowed_roots=[tmp_path])
    call = ToolCall("c1", "remote_file_share_send_file", json.dumps({"path": str(src)}))
    task = asyncio.ensure_future(Direct(reg).dispatch(call, ctx))
    await browser.run(tab.page.wait_for_selector, "#incoming li[data-file='report.pdf'] button")
    await browser.run(tab.tap, "report.pdf")  # Download
    await browser.run(tab.wait_state, "report.pdf", "ready")
    transfer = next(iter(rig.service.outbox.offers.values()))
    await wait_for(lambda: next(iter(transfer.files.values())).state is FileState.READY)
    assert not task.done()  # held on the phone is not delivered: the tool keeps waiting for the tap
    await browser.run(tab.tap, "report.pdf")  # Save
    saved = await browser.run(tab.save_download, "report.pdf", tmp_path / "phone-report.pdf")
    result = await task
    assert saved.read_bytes() == src.read_bytes()
    assert result.status is ToolStatus.SUCCESS, result.output
    assert result.data["files"][0]["state"] == "delivered" and result.data["files"][0]["sha256"] == sha(
        src.read_bytes()
    )
    await browser.run(tab.wait_state, "report.pdf", "saved")
    assert [e.data["name"] for e in rig.events if e.kind is EventKind.DELIVERY_ACKNOWLEDGED] == ["report.pdf"]
    assert device_id in {d.id for d in await rig.service.list_devices() if d.online}
    await browser.run(tab.context.close)


async def test_200_files_are_counted_truthfully_and_saved_as_one_zip(
    rig: Rig, browser: Browser, tmp_path: Path
) -> None:
    """Auto-fetch brings all 200 files onto the phone: 200 ready, 0 delivered. A script-started save (no
    tap) counts for nothing. One tap on "Save all" saves one ZIP with every file byte-exact: 200 delivered."""
    tab, device_id = await paired_phone(rig, browser)
    await browser.run(tab.page.click, "#auto")
    srcs = [make_file(tmp_path / "many", f"photo-{i:03d}.jpg", 1000 + i * 37) for i in range(200)]
    transfer = await rig.service.send_files(srcs, device_id=device_id)
    ready = frozenset({FileState.READY, FileState.DELIVERED})
    assert await transfer.wait(120, settled=ready)
    assert (transfer.count(FileState.READY), transfer.count(FileState.DELIVERED)) == (200, 0)
    await browser.run(tab.page.wait_for_selector, "#save-all-bar:not([hidden])")
    assert "200" in await browser.run(tab.page.text_content, "#save-all")
    # without a user's tap the browser may drop the save: the page must not call it saved
    await browser.run(
        tab.page.evaluate,
        "() => new Promise((r) => setTimeout(() => { document.getElementById('save-all').click(); r(); }, 5500))",
    )  # a click from a timer, once the evaluate call's own user activation (5 s in Chromium) has lapsed
    await asyncio.sleep(0.5)
    assert transfer.count(FileState.DELIVERED) == 0 and set((await browser.run(states, tab)).values()) == {"ready"}
    tab.downloads.clear()
    await browser.run(tab.page.click, "#save-all")  # the user's tap
    zipped = await browser.run(tab.save_download, next_zip(tab), tmp_path / "all.zip")
    assert await transfer.wait(20)
    assert transfer.count(FileState.DELIVERED) == 200
    with zipfile.ZipFile(io.BytesIO(zipped.read_bytes())) as z:
        assert z.testzip() is None  # every CRC-32 right
        assert sorted(z.namelist()) == sorted(p.name for p in srcs)
        assert all(z.read(p.name) == p.read_bytes() for p in srcs)
    assert len(tab.downloads) == 1
    await browser.run(tab.context.close)


def next_zip(tab: PhoneTab) -> str:
    tab.page.wait_for_event("download", timeout=20000) if not tab.downloads else None
    return str(tab.downloads[-1].suggested_filename)


async def test_history_survives_a_reload_and_a_started_download_continues(
    rig: Rig, browser: Browser, tmp_path: Path
) -> None:
    """The page is reloaded in the middle of a download: it comes back with its list, and continues at the
    first record it lacked (not from zero)."""
    tab, device_id = await paired_phone(rig, browser)
    cdp = await browser.run(tab.context.new_cdp_session, tab.page)
    await browser.run(
        cdp.send,
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 5, "downloadThroughput": 3 * 1024 * 1024, "uploadThroughput": -1},
    )
    tab.page.on("request", lambda r: tab.requests.append((r.url, "")) if "/api/v1/download" in r.url else None)
    src = make_file(tmp_path, "movie.mp4", 12 * (1 << 20) + 5)
    transfer = await rig.service.send_files([src], device_id=device_id)
    await browser.run(tab.page.wait_for_selector, "#incoming li[data-file='movie.mp4'] button")
    await browser.run(tab.tap, "movie.mp4")

    def have() -> int:
        files = tab.state()["files"]
        return int(files[0]["have"]) if files else 0

    for _ in range(200):
        if await browser.run(have) >= 4:
            break
        await asyncio.sleep(0.1)
    before = await browser.run(have)
    assert 4 <= before < 13
    await browser.run(tab.page.reload)
    await browser.run(tab.page.wait_for_selector, "#incoming li[data-file='movie.mp4']")
    await browser.run(
        cdp.send,
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
    )
    await browser.run(tab.wait_state, "movie.mp4", "ready", "#incoming", 40)
    starts = [int(u.rsplit("from=", 1)[1]) for u, _ in tab.requests]
    assert starts[0] == 0 and starts[-1] >= before  # resumed where it stopped
    await browser.run(tab.tap, "movie.mp4")
    saved = await browser.run(tab.save_download, "movie.mp4", tmp_path / "phone.mp4")
    assert saved.read_bytes() == src.read_bytes()
    assert await transfer.wait(10)
    # the history stays: after another reload the saved file is still listed (and can be saved again)
    await browser.run(tab.page.reload)
    await browser.run(tab.wait_state, "movie.mp4", "saved")
    await browser.run(tab.context.close)


async def test_uploads_arrive_and_a_failed_one_has_retry(rig: Rig, browser: Browser, tmp_path: Path) -> None:
    tab, _ = await paired_phone(rig, browser)
    data = os.urandom(1_500_000)
    await browser.run(
        tab.page.set_input_files, "#pick", {"name": "IMG_0001.jpg", "mimeType": "image/jpeg", "buffer": data}
    )
    await browser.run(tab.wait_state, "IMG_0001.jpg", "sent", "#outgoing")
    assert (rig.incoming / "IMG_0001.jpg").read_bytes() == data
    received = [e for e in rig.events if e.kind is EventKind.FILE_RECEIVED]
    assert received[0].data["sha256"] == sha(data)
    # the desktop refuses for now (too much announced): the row says why and offers Retry
    rig.service.inbox.limits = Limits(reserve_bytes=1000)
    await browser.run(
        tab.page.set_input_files, "#camera", {"name": "IMG_0002.jpg", "mimeType": "image/jpeg", "buffer": data}
    )
    await browser.run(tab.wait_state, "IMG_0002.jpg", "failed", "#outgoing")
    text = await browser.run(tab.page.text_content, "#outgoing li[data-file='IMG_0002.jpg'] .meta")
    assert "Too much is waiting" in text
    rig.service.inbox.limits = Limits()
    await browser.run(tab.tap, "IMG_0002.jpg", "#outgoing")  # Retry
    await browser.run(tab.wait_state, "IMG_0002.jpg", "sent", "#outgoing")
    assert (rig.incoming / "IMG_0002.jpg").read_bytes() == data
    await browser.run(tab.page.reload)  # the list is kept
    await browser.run(tab.wait_state, "IMG_0001.jpg", "sent", "#outgoing")
    await browser.run(tab.context.close)


async def test_two_phones_pixel_and_iphone(rig: Rig, browser: Browser, tmp_path: Path) -> None:
    (a, a_id), (b, b_id) = (
        await paired_phone(rig, browser),
        await paired_phone(rig, browser, locale="zh-CN", device=IPHONE),
    )
    fa, fb = make_file(tmp_path, "for-a.txt", 70_000), make_file(tmp_path, "给B的.txt", 80_000)
    ta = await rig.service.send_files([fa], device_id=a_id)
    tb = await rig.service.send_files([fb], device_id=b_id)
    for tab, name in ((a, fa.name), (b, fb.name)):
        await browser.run(tab.page.wait_for_selector, f"#incoming li[data-file='{name}'] button")
        await browser.run(tab.tap, name)
        await browser.run(tab.wait_state, name, "ready")
        await browser.run(tab.tap, name)
    sa = await browser.run(a.save_download, fa.name, tmp_path / "a.txt")
    sb = await browser.run(b.save_download, fb.name, tmp_path / "b.txt")
    assert await ta.wait(10) and await tb.wait(10)
    assert (sa.read_bytes(), sb.read_bytes()) == (fa.read_bytes(), fb.read_bytes())
    assert await browser.run(a.page.locator("#incoming li").count) == 1  # each phone sees only its own files
    assert await browser.run(b.page.locator("#incoming li").count) == 1
    assert {d.id for d in await rig.service.list_devices() if d.online} == {a_id, b_id}
    assert await browser.run(b.page.text_content, "#receive-card h2") == "来自电脑"
    assert "iPhone" in {d.name for d in await rig.service.list_devices()}
    await browser.run(a.context.close)
    await browser.run(b.context.close)


async def test_revoked_reused_and_expired(rig: Rig, browser: Browser, clock: FakeClock) -> None:
    code = rig.service.new_pairing_code()
    tab = await browser.run(browser.open_phone, code.url)
    await browser.run(tab.page.wait_for_selector, "#send-card:not([hidden])")
    device_id = (await rig.service.list_devices())[0].id
    await wait_for(lambda: rig.service.is_online(device_id))

    reused = await browser.run(browser.open_phone, code.url)  # the same QR code on a second phone
    await browser.run(
        reused.page.wait_for_function, "() => document.getElementById('notice-text').textContent.includes('used')"
    )
    assert await browser.run(reused.page.is_visible, "#send-card") is False
    assert len(await rig.service.list_devices()) == 1

    await rig.service.revoke(device_id)  # the open page is told at once over the live stream
    await browser.run(tab.page.wait_for_selector, "#pair-card:not([hidden])")
    assert "removed" in await browser.run(tab.page.text_content, "#notice-text")
    assert (await browser.run(tab.state))["paired"] is False

    code = rig.service.new_pairing_code()
    await browser.run(tab.page.goto, code.url)  # the same phone pairs again: its entry comes back, new key
    await browser.run(tab.page.wait_for_selector, "#send-card:not([hidden])")
    devices = await rig.service.list_devices()
    assert [d.id for d in devices] == [device_id]
    clock.advance(KEY_LIFETIME_S + 60)  # a month without use: the key's lifetime is over
    await browser.run(tab.page.reload)
    await browser.run(tab.page.wait_for_selector, "#pair-card:not([hidden])")
    assert "expired" in await browser.run(tab.page.text_content, "#notice-text")
    for t in (tab, reused):
        await browser.run(t.context.close)


async def test_unpair_on_the_phone_revokes_on_the_desktop(rig: Rig, browser: Browser) -> None:
    tab, _ = await paired_phone(rig, browser)
    await browser.run(tab.page.click, "#unpair")
    await browser.run(tab.page.click, "#foot button.primary")  # confirm
    await browser.run(tab.page.wait_for_selector, "#pair-card:not([hidden])")
    await wait_for(lambda: EventKind.DEVICE_REVOKED.value in rig.kinds())
    assert await rig.service.list_devices() == []
    await browser.run(tab.context.close)


async def test_page_reconnects_after_the_server_restarts(rig: Rig, browser: Browser, tmp_path: Path) -> None:
    tab, device_id = await paired_phone(rig, browser)
    port = rig.service.port
    await rig.service.stop()
    await browser.run(tab.page.wait_for_selector, "#status.offline")
    await rig.service.start("127.0.0.1", port)  # same address: the page finds it again by itself
    await wait_for(lambda: rig.service.is_online(device_id), within=30)
    src = make_file(tmp_path, "after.txt", 10)
    await rig.service.send_files([src], device_id=device_id)
    await browser.run(tab.page.wait_for_selector, "#incoming li[data-file='after.txt']")
    assert await browser.run(tab.page.get_attribute, "#status", "class") == "status online"
    await browser.run(tab.context.close)


async def test_language_follows_the_phone_and_can_be_switched(rig: Rig, browser: Browser) -> None:
    tab = await browser.run(browser.open_phone, rig.base + "/", "zh-CN", None, IPHONE)
    await browser.run(tab.page.wait_for_selector, "#pair-card:not([hidden])")
    assert await browser.run(tab.page.text_content, "#pair-card h2") == "连接到电脑"
    await browser.run(tab.page.click, "#lang")
    assert await browser.run(tab.page.text_content, "#pair-card h2") == "Connect to your computer"
    await browser.run(tab.page.reload)
    await browser.run(tab.page.wait_for_selector, "#pair-card:not([hidden])")
    assert await browser.run(tab.page.text_content, "#pair-card h2") == "Connect to your computer"  # remembered
    await browser.run(tab.context.close)


def _crypto_in_page(tab: PhoneTab) -> dict[str, Any]:
    return dict(
        tab.page.evaluate(
            """async () => {
                await window.weclaw.ready;
                const p = window.weclaw.proto;
                const key = new Uint8Array(32).map((_, i) => i);
                const rec = new p.Records(key, "f1", 2000000, new Uint8Array(16).fill(7));
                const data = new Uint8Array(2000000).map((_, i) => (i * 31 + 7) & 255);
                const sealed = [0, 1].map((i) => p.b64e(rec.seal(i, data.subarray(i * p.RECORD, (i + 1) * p.RECORD))));
                return { kdf: p.b64e(p.kdf(key, "records", new Uint8Array(16).fill(7))),
                         mac: p.b64e(p.mac(key, ["a", "b"])), sealed: sealed,
                         crc: window.weclaw.crc32(0, data) };
            }"""
        )
    )


async def test_the_page_and_the_desktop_compute_the_same_crypto(rig: Rig, browser: Browser) -> None:
    """noble in Chromium and cryptography in Python agree on HKDF, HMAC and sealed records (and CRC-32)."""
    import zlib

    from weclaw_desktop.companion import crypto as c

    tab = await browser.run(browser.open_phone, rig.base + "/")
    got = await browser.run(_crypto_in_page, tab)
    key = bytes(range(32))
    salt = b"\7" * 16
    data = bytes((i * 31 + 7) & 255 for i in range(2_000_000))
    assert got["kdf"] == c.b64e(c.hkdf(key, "records", salt=salt))
    assert got["mac"] == c.b64e(c.mac(key, "a", "b"))
    sealer = c.RecordSealer(key, "f1", len(data), salt)
    assert got["sealed"] == [c.b64e(sealer.seal(i, data[i * c.RECORD : (i + 1) * c.RECORD])) for i in range(2)]
    assert got["crc"] == zlib.crc32(data)
    await browser.run(tab.context.close)
