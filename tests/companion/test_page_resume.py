"""The desktop killed with SIGKILL (a real ``weclaw phone`` process) in the middle of a download and of an
upload: started again, it finds the offer and the half-received upload in its database, and the page in
Chromium continues both at the first record missing. Nothing is lost, nothing is counted twice."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import Browser, PhoneTab, chromium_available
from polling import until

from weclaw_desktop.paths import app_paths

pytestmark = pytest.mark.skipif(not chromium_available(), reason="needs /usr/bin/chromium and playwright")
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    b = Browser()
    yield b
    b.close()


class Desktop:
    """``python -m weclaw_desktop phone`` in its own process, on a fixed port, with a file-backed keyring."""

    def __init__(self, home: Path, port: int) -> None:
        self.home, self.port = home, port
        self.proc: subprocess.Popen[str] | None = None
        self.lines: list[str] = []

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("WECLAW_", "PYTEST"))}
        env.update(
            WECLAW_HOME=str(self.home),
            WECLAW_TEST_KEYRING=str(self.home / "keyring.json"),
            PYTHON_KEYRING_BACKEND="filekeyring.FileKeyring",
            PYTHONPATH=os.pathsep.join([str(ROOT), str(HERE)]),
            LANG="C.UTF-8",
            PYTHONUNBUFFERED="1",
        )
        return env

    async def start(self, *extra: str) -> None:
        cmd = [sys.executable, "-m", "weclaw_desktop", "phone", "--host", "127.0.0.1", "--port", str(self.port), *extra]
        self.lines = []
        self.proc = subprocess.Popen(  # noqa: ASYNC220  (a plain Popen: the test kills it with SIGKILL)
            cmd, env=self.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        loop = asyncio.get_running_loop()
        assert self.proc.stdout is not None
        out = self.proc.stdout

        def pump() -> None:
            for line in out:
                self.lines.append(line.rstrip("\n"))

        loop.run_in_executor(None, pump)
        await until(
            lambda: any("offered" in x or "#s=" in x for x in self.lines),
            within=60,
            message=lambda: "\n".join(self.lines),
        )

    def url(self) -> str:
        m = next(re.search(r"(http://\S+#s=[A-Za-z0-9_-]{43})", x) for x in self.lines if "#s=" in x)
        assert m is not None
        return m.group(1)

    def kill9(self) -> None:
        assert self.proc is not None
        self.proc.kill()  # SIGKILL: no cleanup, no shutdown handler
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def have(tab: PhoneTab, name: str, kind: str = "files") -> int:
    rows = [r for r in tab.state()[kind] if r["name"] == name]
    return int(rows[0]["have" if kind == "files" else "sent"]) if rows else 0


@pytest.mark.timeout(400)  # four desktop starts and two throttled transfers
async def test_kill_9_during_a_download_and_an_upload(browser: Browser, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    desktop = Desktop(home, free_port())
    big = tmp_path / "video.mp4"
    big.write_bytes(os.urandom(20 * (1 << 20) + 11))
    try:
        await desktop.start("--yes")
        tab = await browser.run(browser.open_phone, desktop.url())
        await browser.run(tab.page.wait_for_selector, "#send-card:not([hidden])")
        cdp = await browser.run(tab.context.new_cdp_session, tab.page)
        slow = {"offline": False, "latency": 5, "downloadThroughput": 2 << 20, "uploadThroughput": 2 << 20}
        await browser.run(cdp.send, "Network.emulateNetworkConditions", slow)
        starts: list[int] = []
        tab.page.on(
            "request", lambda r: starts.append(int(r.url.rsplit("from=", 1)[1])) if "/download?" in r.url else None
        )
        desktop.kill9()

        # a desktop that offers the file, killed in the middle of the download
        await desktop.start("--send", str(big), "--wait", "600")
        await browser.run(tab.page.wait_for_selector, "#incoming li[data-file='video.mp4'] button", timeout=40000)
        await browser.run(tab.tap, "video.mp4")
        await until(lambda: browser.run(have, tab, "video.mp4"), within=60)
        await until(lambda: _at_least(browser, tab, "video.mp4", 5), within=60, message="download progress")
        before = await browser.run(have, tab, "video.mp4")
        desktop.kill9()
        await desktop.start("--yes")  # a plain desktop: it only has what its database kept
        await browser.run(tab.wait_state, "video.mp4", "ready", "#incoming", 120)
        assert starts[0] == 0 and max(starts) >= before, starts  # resumed at the record it had, not from 0
        await browser.run(tab.tap, "video.mp4")
        saved = await browser.run(tab.save_download, "video.mp4", tmp_path / "phone.mp4")
        assert saved.read_bytes() == big.read_bytes()
        paths = app_paths(home)
        db = paths.database
        await until(lambda: _offer_state(db) == "delivered", within=20, message=lambda: str(_offer_state(db)))

        # an upload, the desktop killed in the middle of it, and started again
        photo = os.urandom(16 * (1 << 20) + 3)
        await browser.run(
            tab.page.set_input_files, "#pick", {"name": "clip.mov", "mimeType": "video/quicktime", "buffer": photo}
        )
        await until(lambda: _at_least(browser, tab, "clip.mov", 4, "uploads"), within=60, message="upload progress")
        desktop.kill9()
        await desktop.start("--yes")
        await browser.run(tab.wait_state, "clip.mov", "sent", "#outgoing", 120)
        got = paths.incoming / "clip.mov"
        assert got.read_bytes() == photo
        assert [p.name for p in paths.incoming.iterdir() if p.is_file()] == ["clip.mov"]
        await browser.run(tab.context.close)
    finally:
        desktop.stop()


async def _at_least(browser: Browser, tab: PhoneTab, name: str, n: int, kind: str = "files") -> bool:
    return await browser.run(have, tab, name, kind) >= n


def _offer_state(db: Path) -> str | None:
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT state FROM companion_offer_files WHERE name='video.mp4'").fetchone()
    return str(row[0]) if row else None
