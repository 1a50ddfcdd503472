"""Real headless Chromium (Debian's /usr/bin/chromium) with a phone profile, driven from a worker thread.

Playwright's sync API lives in one thread per test module (one browser); the companion server runs on the
test's event loop, so tests ``await browser.run(fn, ...)`` and the loop keeps serving while the phone acts.
Never ``playwright install``: ENGINEERING_NOTES.md.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from polling import until_sync

T = TypeVar("T")

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def chromium_available() -> bool:
    if not Path(CHROMIUM).exists() or shutil.which("chromium") is None:
        return False
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return False
    return True


class PhoneTab:
    """One phone: its own browser context (cookies, localStorage) and page; downloads are collected."""

    def __init__(self, context: Any, page: Any) -> None:
        self.context = context
        self.page = page
        self.downloads: list[Any] = []
        self.requests: list[tuple[str, str]] = []  # (url, Range header) of file downloads
        page.on("download", lambda d: self.downloads.append(d))

    def file_row(self, name: str) -> str:
        return f"#incoming li[data-file='{name}']"

    def state_of(self, name: str, section: str = "#incoming") -> str:
        loc = self.page.locator(f"{section} li[data-file='{name}'] .meta") if section == "#incoming" else None
        if loc is None:
            loc = self.page.locator(f"{section} li", has_text=name).locator(".meta")
        return str(loc.first.get_attribute("data-state"))

    def wait_state(self, name: str, state: str, section: str = "#incoming", timeout_s: float = 15) -> None:
        until_sync(
            lambda: self.state_of(name, section) == state,
            within=timeout_s,
            interval=0.05,
            message=lambda: f"{name}: state {self.state_of(name, section)!r}, expected {state!r}",
            pause=self._pause,
        )

    def save_download(self, name: str, dest: Path, timeout_s: float = 15) -> Path:
        found = until_sync(
            lambda: [d for d in self.downloads if d.suggested_filename == name],
            within=timeout_s,
            interval=0.05,
            message=lambda: f"no download of {name}; got {[d.suggested_filename for d in self.downloads]}",
            pause=self._pause,
        )
        found[0].save_as(str(dest))
        return dest

    def _pause(self, seconds: float) -> None:
        """Wait while Playwright keeps delivering the page's events (downloads, DOM changes)."""
        self.page.wait_for_timeout(seconds * 1000)


class Browser:
    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="chromium")
        self._pool.submit(self._start).result()

    def _start(self) -> None:
        from playwright.sync_api import sync_playwright

        self._pw = sync_playwright().start()
        self.devices = self._pw.devices
        self.browser = self._pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.wrap_future(self._pool.submit(fn, *args))

    def open_phone(self, url: str, locale: str = "en-US", width: int | None = None) -> PhoneTab:
        """(browser thread) A new phone that opens ``url``."""
        profile = dict(self.devices["Pixel 7"])
        if width is not None:
            profile["viewport"] = {"width": width, "height": 780}
        context = self.browser.new_context(**profile, accept_downloads=True, locale=locale)
        page = context.new_page()
        tab = PhoneTab(context, page)
        page.goto(url)
        return tab

    def close(self) -> None:
        def stop() -> None:
            self.browser.close()
            self._pw.stop()

        self._pool.submit(stop).result()
        self._pool.shutdown()
