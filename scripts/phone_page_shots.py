"""Screenshots of every state of the phone page, in English (Pixel 7) and Chinese (iPhone 14), with the real
desktop service on loopback and headless Chromium.

    python scripts/phone_page_shots.py [--out /tmp/phone-shots]

States: not paired, pairing (waiting for the desktop's yes), a used QR code, paired and empty, a download in
progress, files held on the phone with "Save all as ZIP", saved / failed / cancelled rows, uploads (in
progress, sent, failed with Retry), offline and reconnecting, removed on the desktop, expired, and the Unpair
question. Each PNG is named <lang>-<nn>-<state>.png.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "companion"))

from browser import Browser, PhoneTab  # noqa: E402
from fakeclock import FakeClock  # noqa: E402

from weclaw_desktop.companion import CompanionService, FileState  # noqa: E402
from weclaw_desktop.companion.devices import KEY_LIFETIME_S  # noqa: E402
from weclaw_desktop.companion.limits import Limits  # noqa: E402
from weclaw_desktop.paths import app_paths  # noqa: E402
from weclaw_desktop.settings import CompanionSettings  # noqa: E402


class Secrets:
    persistent = True

    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def get(self, name: str) -> str | None:
        return self.values.get(name)

    def set(self, name: str, value: str) -> bool:
        self.values[name] = value
        return True


async def shoot(browser: Browser, out: Path, lang: str, device: str, tmp: Path) -> list[Path]:
    os.environ["WECLAW_HOME"] = str(tmp / f"home-{lang}")
    clock = FakeClock()
    settings = CompanionSettings(auto_accept=False, incoming_dir=str(tmp / f"in-{lang}"))
    service = CompanionService(
        settings, paths=app_paths(), desktop_name="WeClaw PC", secrets=Secrets(), clock=clock, limits=Limits()
    )
    await service.start("127.0.0.1", 0)
    gate = asyncio.Event()

    async def accept(request: Any) -> bool:
        await gate.wait()
        return True

    service.accept_device = accept
    shots: list[Path] = []
    locale = "zh-CN" if lang == "zh" else "en-US"
    n = [0]

    async def snap(tab: PhoneTab, name: str) -> None:
        n[0] += 1
        path = out / f"{lang}-{n[0]:02d}-{name}.png"
        await asyncio.sleep(0.3)
        await browser.run(tab.page.evaluate, "() => window.scrollTo(0, 0)")  # the sticky header stays on top
        await browser.run(tab.page.screenshot, path=str(path), full_page=True)
        shots.append(path)

    try:
        tab = await browser.run(browser.open_phone, service.base_url + "/", locale, None, device)
        await browser.run(tab.page.wait_for_selector, "#pair-card:not([hidden])")
        await snap(tab, "not-paired")

        code = service.new_pairing_code()
        await browser.run(tab.page.goto, code.url)
        await browser.run(
            tab.page.wait_for_function, "() => document.getElementById('notice').dataset.key === 'pairing'"
        )
        await snap(tab, "pairing-waiting-for-the-desktop")
        gate.set()
        await browser.run(tab.page.wait_for_selector, "#send-card:not([hidden])")
        await snap(tab, "paired-empty")

        other = await browser.run(browser.open_phone, code.url, locale, None, device)  # the same QR code again
        await browser.run(other.page.wait_for_selector, "#notice:not([hidden])")
        await browser.run(
            other.page.wait_for_function, "() => document.getElementById('notice').dataset.key === 'err.invalid'"
        )
        await snap(other, "used-qr-code")
        await browser.run(other.context.close)

        dev = (await service.list_devices())[0]
        files = tmp / f"files-{lang}"
        files.mkdir()
        big = files / ("旅行视频.mp4" if lang == "zh" else "holiday-video.mp4")
        big.write_bytes(os.urandom(24 << 20))
        cdp = await browser.run(tab.context.new_cdp_session, tab.page)
        slow = {"offline": False, "latency": 20, "downloadThroughput": 1 << 20, "uploadThroughput": 1 << 20}
        await browser.run(cdp.send, "Network.emulateNetworkConditions", slow)
        t_big = await service.send_files([big], device_id=dev.id)
        await browser.run(tab.page.wait_for_selector, f"#incoming li[data-file='{big.name}'] button")
        await snap(tab, "offered")
        await browser.run(tab.tap, big.name)
        await browser.run(tab.page.wait_for_function, "() => window.weclaw.state().files.some((f) => f.have >= 3)")
        await snap(tab, "downloading")
        fast = {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
        await browser.run(cdp.send, "Network.emulateNetworkConditions", fast)
        await browser.run(tab.wait_state, big.name, "ready", "#incoming", 60)

        names = (
            ["报告.pdf", "照片-01.jpg", "合同.docx"]
            if lang == "zh"
            else ["report.pdf", "photo-01.jpg", "contract.docx"]
        )
        small = []
        for name in names:
            p = files / name
            p.write_bytes(os.urandom(300_000))
            small.append(p)
        await browser.run(tab.page.click, "#auto")
        t_small = await service.send_files(small, device_id=dev.id)
        await t_small.wait(30, settled=frozenset({FileState.READY}))
        await browser.run(tab.page.wait_for_selector, "#save-all-bar:not([hidden])")
        await snap(tab, "ready-tap-to-save-and-save-all")

        await browser.run(tab.tap, big.name)  # saved
        changed = files / ("已修改.txt" if lang == "zh" else "changed-later.txt")
        changed.write_text("v1")
        cancelled = files / ("取消的.zip" if lang == "zh" else "cancelled.zip")
        cancelled.write_bytes(b"x" * 1000)
        await browser.run(tab.page.click, "#auto")  # off: these wait for a tap
        t_changed = await service.send_files([changed], device_id=dev.id)
        t_cancel = await service.send_files([cancelled], device_id=dev.id)
        await browser.run(tab.page.wait_for_selector, f"#incoming li[data-file='{cancelled.name}']")
        changed.write_text("version two")
        service.cancel(t_cancel.id)
        await browser.run(tab.tap, changed.name)
        await browser.run(tab.wait_state, changed.name, "failed")
        await browser.run(tab.wait_state, cancelled.name, "cancelled")
        await snap(tab, "saved-failed-cancelled")

        photo = os.urandom(6 << 20)
        await browser.run(cdp.send, "Network.emulateNetworkConditions", slow)
        pname = "IMG_0042.jpg"
        await browser.run(tab.page.set_input_files, "#pick", {"name": pname, "mimeType": "image/jpeg", "buffer": photo})
        await browser.run(tab.page.wait_for_function, "() => window.weclaw.state().uploads.some((u) => u.sent >= 1)")
        await snap(tab, "uploading")
        await browser.run(cdp.send, "Network.emulateNetworkConditions", fast)
        await browser.run(tab.wait_state, pname, "sent", "#outgoing", 60)
        service.inbox.limits = Limits(reserve_bytes=1000)
        await browser.run(
            tab.page.set_input_files, "#camera", {"name": "IMG_0043.jpg", "mimeType": "image/jpeg", "buffer": photo}
        )
        await browser.run(tab.wait_state, "IMG_0043.jpg", "failed", "#outgoing")
        service.inbox.limits = Limits()
        await snap(tab, "sent-and-failed-upload-with-retry")

        port = service.port
        await service.stop()
        await browser.run(tab.page.wait_for_selector, "#status.offline")
        await snap(tab, "offline-reconnecting")
        await service.start("127.0.0.1", port)
        await browser.run(tab.page.wait_for_selector, "#status.online", timeout=40000)

        await browser.run(tab.page.click, "#unpair")
        await snap(tab, "unpair-question")
        await browser.run(tab.page.click, "#foot button:not(.primary)")

        await service.revoke(dev.id)
        await browser.run(tab.page.wait_for_selector, "#pair-card:not([hidden])")
        await snap(tab, "removed-on-the-desktop")

        code = service.new_pairing_code()
        await browser.run(tab.page.goto, code.url)
        await browser.run(tab.page.wait_for_selector, "#send-card:not([hidden])")
        clock.advance(KEY_LIFETIME_S + 60)
        await browser.run(tab.page.reload)
        await browser.run(
            tab.page.wait_for_function, "() => document.getElementById('notice').dataset.key === 'err.expired'"
        )
        await snap(tab, "expired")
        await browser.run(tab.context.close)
        for t in (t_big, t_small, t_changed):
            assert t.files
    finally:
        await service.stop()
    return shots


async def main(out: Path) -> int:
    await asyncio.to_thread(out.mkdir, parents=True, exist_ok=True)
    browser = await asyncio.to_thread(Browser)
    try:
        with tempfile.TemporaryDirectory(prefix="weclaw-page-shots-") as tmp:
            shots = [
                *(await shoot(browser, out, "en", "Pixel 7", Path(tmp))),
                *(await shoot(browser, out, "zh", "iPhone 14", Path(tmp))),
            ]
    finally:
        await asyncio.to_thread(browser.close)
    print("\n".join(str(p) for p in shots))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "phone-shots")
    raise SystemExit(asyncio.run(main(parser.parse_args().out)))
