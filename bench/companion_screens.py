"""Screenshots of the phone page at 360 px (en and zh) in headless Chromium, for a visual check.

    python bench/companion_screens.py [OUT_DIR]      (default: ./companion-screens)

Pairs a phone, offers two files (one downloaded and verified, one waiting), uploads one from the phone,
and saves ``phone-en.png``, ``phone-zh.png`` and ``phone-unpaired-zh.png``.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from weclaw_desktop.companion import CompanionService
from weclaw_desktop.paths import app_paths
from weclaw_desktop.settings import CompanionSettings

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]  # fmt: skip


async def main(out: Path) -> None:
    from playwright.async_api import async_playwright

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["WECLAW_HOME"] = tmp
        service = CompanionService(CompanionSettings(auto_accept=True), paths=app_paths(), desktop_name="My-PC")
        await service.start("127.0.0.1", 0)
        docs = Path(tmp) / "docs"
        docs.mkdir()
        (docs / "季度报告 Q3.pdf").write_bytes(os.urandom(2_400_000))
        (docs / "holiday-photos.zip").write_bytes(os.urandom(800_000))
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            for lang, locale in (("en", "en-US"), ("zh", "zh-CN")):
                profile = {**p.devices["Pixel 7"], "viewport": {"width": 360, "height": 720}}
                ctx = await browser.new_context(**profile, accept_downloads=True, locale=locale)
                page = await ctx.new_page()
                if lang == "zh":
                    await page.goto(service.base_url + "/")
                    await page.screenshot(path=str(out / "phone-unpaired-zh.png"))
                await page.goto(service.new_pairing_code().url)
                await page.wait_for_selector("#receive-card:not([hidden])")
                device = next(d for d in await service.list_devices() if d.name == "Pixel 7")
                while not service.is_online(device.id):  # noqa: ASYNC110 - a script, polling is fine
                    await asyncio.sleep(0.05)
                transfer = await service.send_files(sorted(docs.iterdir()), device_id=device.id)
                await page.click("#incoming li[data-file='季度报告 Q3.pdf'] button")
                await transfer.wait(5)
                await page.set_input_files("#pick", {"name": "IMG_2048.jpg", "mimeType": "image/jpeg",
                                                     "buffer": os.urandom(1_300_000)})  # fmt: skip
                await page.wait_for_selector("#outgoing .meta[data-state='sent']")
                await page.screenshot(path=str(out / f"phone-{lang}.png"), full_page=True)
                await ctx.close()
            await browser.close()
        await service.stop()


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "companion-screens")
    target.mkdir(parents=True, exist_ok=True)
    asyncio.run(main(target))
    print("\n".join(str(p) for p in sorted(target.glob("phone-*.png"))))
