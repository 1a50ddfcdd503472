"""Phone-link download throughput on loopback, side by side with a plain aiohttp static-file response.

    python bench/companion.py [--size-mb 1024] [--rounds 3] [--qasync]

Creates a sparse file of the given size in a temp dir (deleted afterwards), serves it (1) through the
companion's authenticated download endpoint and (2) through a bare ``web.FileResponse`` route, downloads
each with an aiohttp client on 127.0.0.1 (the client reads and discards), alternating, and prints the
median and worst throughput of each, the ratio (target >= 70%), the page-style 4 MB Range-chunk
download, and the resident memory growth during the companion transfers (target < 50 MB).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import aiohttp
import psutil
from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from weclaw_desktop.companion import CompanionService
from weclaw_desktop.paths import app_paths
from weclaw_desktop.settings import CompanionSettings

READ = 1 << 20


class RssSampler:
    """Peak resident memory of this process while running, sampled every 20 ms in a thread."""

    def __init__(self) -> None:
        self.proc = psutil.Process()
        self.base = self.proc.memory_info().rss
        self.peak = self.base
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, self.proc.memory_info().rss)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def growth_mb(self) -> float:
        return (self.peak - self.base) / (1 << 20)


async def fetch(http: aiohttp.ClientSession, url: str, headers: dict[str, str], expect: int) -> float:
    t0 = time.perf_counter()
    got = 0
    async with http.get(url, headers=headers) as r:
        assert r.status in (200, 206), r.status
        async for chunk in r.content.iter_chunked(READ):
            got += len(chunk)
    assert got == expect, (got, expect)
    return time.perf_counter() - t0


async def fetch_chunked(http: aiohttp.ClientSession, url: str, headers: dict[str, str], size: int) -> float:
    """Like the phone page: 4 MB Range requests, one after another."""
    step = 4 << 20
    t0 = time.perf_counter()
    for start in range(0, size, step):
        end = min(size, start + step) - 1
        h = {**headers, "Range": f"bytes={start}-{end}", "X-WeClaw-Verify": "1"}
        async with http.get(url, headers=h) as r:
            assert r.status == 206
            data = await r.read()
            assert len(data) == end - start + 1
    return time.perf_counter() - t0


async def run(size_mb: int, rounds: int) -> int:
    size = size_mb << 20
    with tempfile.TemporaryDirectory(prefix="weclaw-bench-") as tmp:
        os.environ["WECLAW_HOME"] = str(Path(tmp) / "home")
        big = Path(tmp) / "big.bin"
        with big.open("wb") as fh:
            fh.truncate(size)  # sparse: instant, no disk space used
        service = CompanionService(CompanionSettings(auto_accept=True), paths=app_paths(), desktop_name="bench")
        await service.start("127.0.0.1", 0)

        baseline = web.Application()

        async def static(request: web.Request) -> web.StreamResponse:
            return web.FileResponse(big)

        baseline.router.add_get("/big", static)
        runner = web.AppRunner(baseline, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        base_url = f"http://127.0.0.1:{runner.addresses[0][1]}/big"

        async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
            code = service.new_pairing_code()
            async with http.post(service.base_url + "/api/v1/pair", json={"token": code.token, "name": "bench"}) as r:
                body = await r.json()
            auth = {"Authorization": f"Bearer {body['token']}"}
            t0 = time.perf_counter()
            transfer = await service.send_files([big], device_id=body["device"]["id"])
            offer_s = time.perf_counter() - t0
            f = next(iter(transfer.files.values()))
            ours_url = f"{service.base_url}/api/v1/download?session={transfer.id}&file={f.id}&token={f.token}"

            await fetch(http, base_url, {}, size)  # warm the page cache and both code paths
            await fetch(http, ours_url, auth, size)
            plain: list[float] = []
            ours: list[float] = []
            growth: list[float] = []
            for _ in range(rounds):
                plain.append(await fetch(http, base_url, {}, size))
                with RssSampler() as mem:
                    ours.append(await fetch(http, ours_url, auth, size))
                growth.append(mem.growth_mb)
            with RssSampler() as mem:
                chunked = await fetch_chunked(http, ours_url, auth, size)
            growth.append(mem.growth_mb)

        await runner.cleanup()
        await service.stop()

    def mbps(seconds: list[float]) -> tuple[float, float]:
        rates = [size_mb / s for s in seconds]
        return statistics.median(rates), min(rates)

    pm, pw = mbps(plain)
    om, ow = mbps(ours)
    ratio = om / pm
    print(
        f"file: {size_mb} MB sparse, {rounds} rounds each, loopback, loop={type(asyncio.get_running_loop()).__name__}"
    )
    print(f"offer (stat + SHA-256 of the file): {offer_s:.2f} s")
    print(f"plain aiohttp FileResponse : median {pm:8.0f} MB/s   worst {pw:8.0f} MB/s")
    print(f"companion /download        : median {om:8.0f} MB/s   worst {ow:8.0f} MB/s")
    print(f"companion 4 MB Range chunks: {size_mb / chunked:8.0f} MB/s  (how the phone page fetches verified files)")
    print(f"ratio companion/plain      : {ratio:.0%}   target >= 70%   {'PASS' if ratio >= 0.7 else 'FAIL'}")
    print(
        f"RSS growth during transfer : max {max(growth):.1f} MB   target < 50 MB   {'PASS' if max(growth) < 50 else 'FAIL'}"
    )
    return 0 if ratio >= 0.7 and max(growth) < 50 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--qasync", action="store_true", help="run on the app's qasync loop instead of asyncio")
    args = parser.parse_args()
    if args.qasync:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        from PySide6.QtWidgets import QApplication

        from weclaw_desktop.ui.qtloop import WeclawEventLoop

        app = QApplication.instance() or QApplication([])
        loop = WeclawEventLoop(app)
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(run(args.size_mb, args.rounds))
    return asyncio.run(run(args.size_mb, args.rounds))


if __name__ == "__main__":
    raise SystemExit(main())
