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
        self.requests: list[tuple[str, str]] = []  # urls of file downloads
        self.console: list[str] = []
        page.on("download", lambda d: self.downloads.append(d))

    def file_row(self, name: str) -> str:
        return f"#incoming li[data-file='{name}']"

    def state_of(self, name: str, section: str = "#incoming") -> str:
        loc = self.page.locator(f"{section} li[data-file='{name}'] .meta")
        return str(loc.first.get_attribute("data-state", timeout=2000)) if loc.count() else ""

    def wait_state(self, name: str, state: str, section: str = "#incoming", timeout_s: float = 20) -> None:
        until_sync(
            lambda: self.state_of(name, section) == state,
            within=timeout_s,
            interval=0.05,
            message=lambda: f"{name}: state {self.state_of(name, section)!r}, expected {state!r}",
            pause=self._pause,
        )

    def tap(self, name: str, section: str = "#incoming") -> None:
        """Tap the row's button (a real click: the page gets a user activation)."""
        self.page.click(f"{section} li[data-file='{name}'] button")

    def state(self) -> dict[str, Any]:
        return dict(self.page.evaluate("window.weclaw.state()"))

    def save_download(self, name: str, dest: Path, timeout_s: float = 20) -> Path:
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
    def __init__(self, extra_args: list[str] | None = None) -> None:
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="chromium")
        self._pool.submit(self._start, extra_args or []).result()

    def _start(self, extra_args: list[str]) -> None:
        from playwright.sync_api import sync_playwright

        self._pw = sync_playwright().start()
        self.devices = self._pw.devices
        self.browser = self._pw.chromium.launch(executable_path=CHROMIUM, args=ARGS + extra_args)

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await asyncio.wrap_future(self._pool.submit(fn, *args, **kwargs))

    def open_phone(
        self, url: str, locale: str = "en-US", width: int | None = None, device: str = "Pixel 7"
    ) -> PhoneTab:
        """(browser thread) A new phone (a Playwright device profile) that opens ``url``."""
        profile = dict(self.devices[device])
        profile.pop("default_browser_type", None)
        if width is not None:
            profile["viewport"] = {"width": width, "height": 780}
        context = self.browser.new_context(**profile, accept_downloads=True, locale=locale)
        page = context.new_page()
        tab = PhoneTab(context, page)
        page.on("console", lambda m: tab.console.append(f"{m.type}: {m.text}"))
        page.on("pageerror", lambda e: tab.console.append(f"pageerror: {e}"))
        page.goto(url)
        return tab

    def close(self) -> None:
        def stop() -> None:
            self.browser.close()
            self._pw.stop()

        self._pool.submit(stop).result()
        self._pool.shutdown()
