"""The phone page in real headless Chromium (Pixel 7 profile) against a real server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import Browser, PhoneTab, chromium_available
from companion_helpers import Rig, make_file, sha, wait_for
from toolrun import Direct

from weclaw_desktop.companion import EventKind, FileState
from weclaw_desktop.paths import tools_json_path
from weclaw_desktop.toolkit.base import ToolContext, ToolStatus
from weclaw_desktop.toolkit.dispatcher import ToolCall
from weclaw_desktop.toolkit.manifest import load_manifest
from weclaw_desktop.toolkit.registry import ToolRegistry

pytestmark = pytest.mark.skipif(not chromium_available(), reason="needs /usr/bin/chromium and playwright")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    b = Browser()
    yield b
    b.close()


async def paired_phone(rig: Rig, browser: Browser, *, locale: str = "en-US") -> tuple[PhoneTab, str]:
    before = {d.id for d in await rig.service.list_devices()}
    code = rig.service.new_pairing_code()
    tab = await browser.run(browser.open_phone, code.url, locale)
    await browser.run(tab.page.wait_for_selector, "#receive-card:not([hidden])")
    device_id = next(d.id for d in await rig.service.list_devices() if d.id not in before)
    await wait_for(lambda: rig.service.is_online(device_id))
    return tab, device_id


async def test_pair_then_receive_a_file_the_agent_sends(rig: Rig, browser: Browser, tmp_path: Path) -> None:
    tab, device_id = await paired_phone(rig, browser)
    assert await browser.run(tab.page.evaluate, "location.hash") == ""  # the one-time code left the address bar
    src = make_file(tmp_path / "docs", "report.pdf", 5_000_000)  # two 4 MB chunks
    reg = ToolRegistry(load_manifest(tools_json_path()))
    reg.inject({"companion": rig.service})
    ctx = ToolContext(outputs_dir=tmp_path / "out", data_dir=tmp_path, db=None, allowed_roots=[tmp_path])
    call = ToolCall("c1", "remote_file_share_send_file", json.dumps({"path": str(src)}))
    task = asyncio.ensure_future(Direct(reg).dispatch(call, ctx))
    await browser.run(tab.page.wait_for_selector, "#incoming li[data-file='report.pdf'] button")
    await browser.run(tab.page.click, "#incoming li[data-file='report.pdf'] button")
    saved = await browser.run(tab.save_download, "report.pdf", tmp_path / "phone-report.pdf")
    result = await task
    assert saved.read_bytes() == src.read_bytes()
    assert result.status is ToolStatus.SUCCESS, result.output
    assert result.data["files"][0]["state"] == "delivered"
    assert result.data["files"][0]["sha256"] == sha(src.read_bytes())
    await browser.run(tab.wait_state, "report.pdf", "delivered")
    assert [e.data["name"] for e in rig.events if e.kind is EventKind.DELIVERY_ACKNOWLEDGED] == ["report.pdf"]
    assert device_id in {d.id for d in await rig.service.list_devices() if d.online}
    await browser.run(tab.context.close)


def _cut_second_chunk(tab: PhoneTab) -> None:
    """(browser thread) The network drops during the second chunk, once."""
    state = {"n": 0}

    def handle(route: Any) -> None:
        tab.requests.append((route.request.url, route.request.headers.get("range", "")))
        state["n"] += 1
        if state["n"] == 2:
            route.abort("connectionreset")
        else:
            route.continue_()

    tab.page.route("**/api/v1/download*", handle)


async def test_interrupted_download_resumes_with_range(rig: Rig, browser: Browser, tmp_path: Path) -> None:
    tab, device_id = await paired_phone(rig, browser)
    await browser.run(_cut_second_chunk, tab)
    src = make_file(tmp_path, "movie.mp4", 10 * 1024 * 1024 + 123)
    transfer = await rig.service.send_files([src], device_id=device_id)
    await browser.run(tab.page.click, "#incoming li[data-file='movie.mp4'] button")
    saved = await browser.run(tab.save_download, "movie.mp4", tmp_path / "phone-movie.mp4")
    assert await transfer.wait(10)
    assert saved.read_bytes() == src.read_bytes()
    assert next(iter(transfer.files.values())).state is FileState.DELIVERED
    mb4 = 4 * 1024 * 1024
    assert [r for _, r in tab.requests] == [
        f"bytes=0-{mb4 - 1}",
        f"bytes={mb4}-{2 * mb4 - 1}",  # cut off
        f"bytes={mb4}-{2 * mb4 - 1}",  # resumed where it stopped, not from 0
        f"bytes={2 * mb4}-{src.stat().st_size - 1}",
    ]
    await browser.run(tab.context.close)


async def test_upload_from_the_phone_is_verified(rig: Rig, browser: Browser, tmp_path: Path) -> None:
    tab, _ = await paired_phone(rig, browser)
    data = os.urandom(1_500_000)
    payload = {"name": "IMG_0001.jpg", "mimeType": "image/jpeg", "buffer": data}
    await browser.run(tab.page.set_input_files, "#pick", payload)
    await browser.run(tab.wait_state, "IMG_0001.jpg", "sent", "#outgoing")
    assert (rig.incoming / "IMG_0001.jpg").read_bytes() == data
    received = [e for e in rig.events if e.kind is EventKind.FILE_RECEIVED]
    assert received[0].data["sha256"] == sha(data) and received[0].data["verified"] is True
    # the camera input takes photos the same way
    await browser.run(tab.page.set_input_files, "#camera", {**payload, "buffer": b"second photo"})
    await browser.run(tab.wait_state, "IMG_0001.jpg", "sent", "#outgoing")
    await wait_for(lambda: (rig.incoming / "IMG_0001 (2).jpg").exists())
    assert (rig.incoming / "IMG_0001 (2).jpg").read_bytes() == b"second photo"
    await browser.run(tab.context.close)


async def test_two_phones_at_once(rig: Rig, browser: Browser, tmp_path: Path) -> None:
    (a, a_id), (b, b_id) = await paired_phone(rig, browser), await paired_phone(rig, browser, locale="zh-CN")
    await browser.run(b.page.click, "#auto")  # phone B downloads automatically
    fa, fb = make_file(tmp_path, "for-a.txt", 70_000), make_file(tmp_path, "for-b.txt", 80_000)
    ta = await rig.service.send_files([fa], device_id=a_id)
    tb = await rig.service.send_files([fb], device_id=b_id)
    await browser.run(a.page.click, "#incoming li[data-file='for-a.txt'] button")
    sa = await browser.run(a.save_download, "for-a.txt", tmp_path / "a.txt")
    sb = await browser.run(b.save_download, "for-b.txt", tmp_path / "b.txt")
    assert await ta.wait(10) and await tb.wait(10)
    assert (sa.read_bytes(), sb.read_bytes()) == (fa.read_bytes(), fb.read_bytes())
    assert await browser.run(a.page.locator("#incoming li").count) == 1  # each phone sees only its own files
    assert await browser.run(b.page.locator("#incoming li").count) == 1
    assert {d.id for d in await rig.service.list_devices() if d.online} == {a_id, b_id}
    assert await browser.run(b.page.text_content, "#receive-card h2") == "来自电脑"
    await browser.run(a.context.close)
    await browser.run(b.context.close)


async def test_revoked_expired_and_reused_codes_are_refused(rig: Rig, browser: Browser) -> None:
    code = rig.service.new_pairing_code()
    tab = await browser.run(browser.open_phone, code.url)
    await browser.run(tab.page.wait_for_selector, "#receive-card:not([hidden])")
    device_id = (await rig.service.list_devices())[0].id
    await wait_for(lambda: rig.service.is_online(device_id))

    reused = await browser.run(browser.open_phone, code.url)  # the same QR code on a second phone
    await browser.run(
        reused.page.wait_for_function, "document.getElementById('notice-text').textContent.includes('used')"
    )
    assert await browser.run(reused.page.is_visible, "#receive-card") is False
    assert len(await rig.service.list_devices()) == 1

    await rig.service.revoke(device_id)  # the open page is told at once over the live stream
    await browser.run(tab.page.wait_for_selector, "#pair-card:not([hidden])")
    assert "removed" in await browser.run(tab.page.text_content, "#notice-text")
    assert await browser.run(tab.page.evaluate, "localStorage.getItem('weclaw.token')") is None

    code = rig.service.new_pairing_code()
    await browser.run(tab.page.goto, code.url)  # pair again, then let that pairing expire
    await browser.run(tab.page.wait_for_selector, "#receive-card:not([hidden])")
    new_id = next(d.id for d in await rig.service.list_devices())
    assert new_id != device_id
    await rig.service.expire(new_id)
    await browser.run(tab.page.reload)
    await browser.run(tab.page.wait_for_selector, "#pair-card:not([hidden])")
    assert "expired" in await browser.run(tab.page.text_content, "#notice-text")
    for t in (tab, reused):
        await browser.run(t.context.close)


async def test_page_reconnects_after_the_server_restarts(rig: Rig, browser: Browser, tmp_path: Path) -> None:
    tab, device_id = await paired_phone(rig, browser)
    port = rig.service.port
    await rig.service.stop()
    await browser.run(tab.page.wait_for_selector, "#status.offline")
    await rig.service.start("127.0.0.1", port)  # same address: the page finds it again by itself
    await wait_for(lambda: rig.service.is_online(device_id), within=20)
    src = make_file(tmp_path, "after.txt", 10)
    await rig.service.send_files([src], device_id=device_id)
    await browser.run(tab.page.wait_for_selector, "#incoming li[data-file='after.txt']")
    assert await browser.run(tab.page.get_attribute, "#status", "class") == "status online"
    await browser.run(tab.context.close)


def _sha_in_page(tab: PhoneTab, sizes: list[int]) -> list[str]:
    return list(
        tab.page.evaluate(
            """(sizes) => sizes.map((n) => {
                 const data = new Uint8Array(n);
                 for (let i = 0; i < n; i++) data[i] = (i * 31 + 7) & 255;
                 const h = new Sha256();
                 for (let o = 0; o < n; o += 1000003) h.update(data.subarray(o, o + 1000003));
                 return h.hex();
               })""",
            sizes,
        )
    )


async def test_sha256_js_matches_hashlib(rig: Rig, browser: Browser) -> None:
    tab = await browser.run(browser.open_phone, rig.base + "/")
    sizes = [0, 1, 55, 56, 63, 64, 65, 1000, 1_000_003, 2_000_011]  # > 1 MB: several update() calls
    got = await browser.run(_sha_in_page, tab, sizes)
    want = [hashlib.sha256(bytes((i * 31 + 7) & 255 for i in range(n))).hexdigest() for n in sizes]
    assert got == want
    await browser.run(tab.context.close)


async def test_language_follows_the_phone_and_can_be_switched(rig: Rig, browser: Browser) -> None:
    tab = await browser.run(browser.open_phone, rig.base + "/", "zh-CN")
    assert await browser.run(tab.page.text_content, "#pair-card h2") == "连接到电脑"
    await browser.run(tab.page.click, "#lang")
    assert await browser.run(tab.page.text_content, "#pair-card h2") == "Connect to your computer"
    await browser.run(tab.page.reload)
    assert await browser.run(tab.page.text_content, "#pair-card h2") == "Connect to your computer"  # remembered
    await browser.run(tab.context.close)
