"""Phone-link throughput on loopback: the desktop's encrypted download against plain aiohttp, and the phone
page's verified download in headless Chromium (with and without 4x CPU throttling).

    python bench/companion.py [--size-mb 1024] [--rounds 3] [--page-mb 256] [--throttled-mb 64] [--skip-page]
                              [--loop asyncio|qasync] [--record FILE]

The script benches the tree it sits in (ROOT, its parent's parent). To compare with another tree, copy it into
that tree's bench/ (the no-AEAD variant is left out where there is no record pump), run both alternately with
``--record`` and compare the per-run ratios (bench/companion_compare.py does this).

Desktop side: a sparse file served, in interleaved rounds (the order rotates every round), by
  plain     a bare ``web.FileResponse`` (sendfile: the kernel copies page cache to the socket, no user space);
  streamed  plain aiohttp without sendfile: the file read in 4 MB pieces in a thread and written;
  ours      the companion's signed, sealed ``/api/v1/download`` (ChaCha20-Poly1305 records, a fresh key per
            response, progress in the database) -- the real route, through the real service;
  no-aead   the same record pump and writes as ``ours`` with the AEAD replaced by a copy: the ceiling of the
            pipeline itself, so what the cipher costs and what the rest costs can be told apart.
The client is the Python phone (``weclaw_desktop.companion.client``) in a separate process, as a phone is
another machine; it reads and discards. Per variant: median and worst MB/s; ``ours`` against ``plain`` and
``streamed`` as the median (and range) of the per-round ratios, so a machine whose speed drifts still
compares like with like; CPU seconds per GB of the server process and of the client (load-independent: on
a shared machine wall time mostly says how much CPU the bench was given); the server's resident memory
growth while it serves (target < 50 MB); the load average before and after. Target: ours >= 70% of plain.
``--loop qasync`` serves on the app's Qt event loop (``WeclawEventLoop``), as the desktop app does.
Phone side: the real page in Chromium (Pixel 7 profile) fetches a file with "Fetch automatically": time from
the offer to "ready" (every record authenticated and stored in IndexedDB), in MB/s (target: at least the
33 MB/s the SHA-256 page reached here), then the same with Chromium's CPU throttled 4x as a stand-in for a
phone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import psutil
from aiohttp import web

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "companion"))
sys.path.insert(0, str(ROOT / "tests"))

from weclaw_desktop.companion import CompanionService, FileState  # noqa: E402
from weclaw_desktop.companion import crypto as c  # noqa: E402
from weclaw_desktop.paths import app_paths  # noqa: E402
from weclaw_desktop.settings import CompanionSettings  # noqa: E402

try:  # absent in a tree from before the record pump (this script also benches such a copy of main: see --help)
    from weclaw_desktop.companion.http_streams import write_records
    from weclaw_desktop.companion.record_pump import RecordPump, sealed_len

    VARIANTS: tuple[str, ...] = ("plain", "streamed", "ours", "no-aead")
except ImportError:  # pragma: no cover - only in an older tree
    VARIANTS = ("plain", "streamed", "ours")

READ = 1 << 20


class Secrets:
    persistent = True

    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def get(self, name: str) -> str | None:
        return self.values.get(name)

    def set(self, name: str, value: str) -> bool:
        self.values[name] = value
        return True


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


class CopySealer(c.RecordSealer):
    """The records' sizes and layout without the AEAD (the plaintext copied, a zero tag): the ceiling."""

    def seal_into(self, index: int, plaintext: memoryview, out: memoryview) -> None:
        out[: len(plaintext)] = plaintext
        out[len(plaintext) :] = bytes(c.TAG)


def load() -> str:
    one, five, _ = os.getloadavg()
    text = f"load average {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} cores"
    try:
        pressure = Path("/proc/pressure/cpu").read_text().split()[1]  # "avg10=.."
        text += f", CPU pressure {pressure}"
    except (OSError, IndexError):
        pass
    return text


# --- the client process ------------------------------------------------------------------------------


async def client(pair_url: str, base_url: str, size: int, rounds: int, server_pid: int) -> dict[str, Any]:
    """(in the client process) Pair, then run the variants in rotating order; per download: wall seconds,
    CPU seconds of the server process, CPU seconds of this process."""
    import aiohttp

    from weclaw_desktop.companion.client import pair_phone

    server, me = psutil.Process(server_pid), psutil.Process()

    def cpu(p: psutil.Process) -> float:
        t = p.cpu_times()
        return float(t.user + t.system)

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None)) as http:
        phone = await pair_phone(http, pair_url, "bench")
        print(json.dumps({"paired": phone.device_id}), flush=True)
        while not (offers := await phone.offers()):  # noqa: ASYNC110  (polling the desktop over HTTP)
            await asyncio.sleep(0.05)
        offer, f = offers[0]["offer"], offers[0]["files"][0]
        sealed = c.SALT + size + c.record_count(size) * c.TAG

        async def fetch(url: str, headers: dict[str, str], expect: int) -> tuple[float, float, float]:
            s0, c0, t0 = cpu(server), cpu(me), time.perf_counter()
            got = 0
            async with http.get(url, headers=headers) as r:
                assert r.status == 200, r.status
                async for chunk in r.content.iter_chunked(READ):
                    got += len(chunk)
            seconds = time.perf_counter() - t0
            assert got == expect, (url, got, expect)
            return seconds, cpu(server) - s0, cpu(me) - c0

        async def one(variant: str) -> tuple[float, float, float]:
            if variant == "ours":
                path = f"/api/v1/download?o={offer}&f={f['id']}&from=0"
                headers, _ = phone.sign("GET", path, f"dl:{f['id']}", c.digest(b""))
                return await fetch(phone.base + path, headers, sealed)
            if variant == "no-aead":
                return await fetch(base_url + "/pumped", {}, sealed)
            return await fetch(base_url + ("/big" if variant == "plain" else "/streamed"), {}, size)

        for variant in VARIANTS:  # warm the page cache and every code path
            await one(variant)
        print(json.dumps({"warm": True}), flush=True)
        times: dict[str, list[tuple[float, float, float]]] = {v: [] for v in VARIANTS}
        for r in range(rounds):
            order = VARIANTS[r % len(VARIANTS) :] + VARIANTS[: r % len(VARIANTS)]
            for variant in order:
                times[variant].append(await one(variant))
        return times


# --- desktop side ----------------------------------------------------------------------------------------


def baseline_app(big: Path, size: int) -> web.Application:
    app = web.Application()
    mtime_ns = big.stat().st_mtime_ns

    async def static(request: web.Request) -> web.StreamResponse:
        return web.FileResponse(big)

    async def streamed(request: web.Request) -> web.StreamResponse:
        """Plain aiohttp without sendfile: the file read in 4 MB pieces (in a thread) and written."""
        resp = web.StreamResponse()
        resp.content_length = size
        await resp.prepare(request)
        with big.open("rb", buffering=0) as fh:
            while chunk := await asyncio.to_thread(fh.read, 4 << 20):
                await resp.write(chunk)
        return resp

    async def pumped(request: web.Request) -> web.StreamResponse:
        """The download's pump and writes (as http_streams.download) with the AEAD replaced by a copy."""
        sealer = CopySealer(os.urandom(32), "bench", size)
        pump = RecordPump(big, size, mtime_ns, sealer, 0)
        await pump.start()
        try:
            resp = web.StreamResponse()
            resp.content_length = c.SALT + sealed_len(size, 0, sealer.count)
            await resp.prepare(request)
            await resp.write(sealer.salt)
            while (slot := await pump.next()) is not None:
                await write_records(resp, slot.records(size))
                pump.recycle(slot)
            await resp.write_eof()
            return resp
        finally:
            await pump.close()

    app.router.add_get("/big", static)
    app.router.add_get("/streamed", streamed)
    app.router.add_get("/pumped", pumped)
    return app


async def desktop_side(size_mb: int, rounds: int, loop_name: str, record: Path | None = None) -> tuple[bool, list[str]]:
    size = size_mb << 20
    lines: list[str] = []
    before = load()
    with tempfile.TemporaryDirectory(prefix="weclaw-bench-") as tmp:
        os.environ["WECLAW_HOME"] = str(Path(tmp) / "home")
        big = Path(tmp) / "big.bin"
        with big.open("wb") as fh:
            fh.truncate(size)  # sparse: instant, no disk space used
        service = CompanionService(
            CompanionSettings(auto_accept=True), paths=app_paths(), desktop_name="bench", secrets=Secrets()
        )
        await service.start("127.0.0.1", 0)
        runner = web.AppRunner(baseline_app(big, size), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        base_url = f"http://127.0.0.1:{runner.addresses[0][1]}"
        code = service.new_pairing_code()
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--client",
            code.url,
            base_url,
            str(size),
            str(rounds),
            str(os.getpid()),
            stdout=asyncio.subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert proc.stdout is not None
        paired = json.loads(await proc.stdout.readline())
        t0 = time.perf_counter()
        await service.send_files([big], device_id=paired["paired"])
        offer_s = time.perf_counter() - t0
        await proc.stdout.readline()  # warmed up
        with RssSampler() as mem:
            result = json.loads(await proc.stdout.readline())
        await proc.wait()
        await runner.cleanup()
        await service.stop()
    if record is not None:  # one JSON line per run, for a driver comparing two trees run after run
        row = {"tree": str(ROOT), "loop": loop_name, "size_mb": size_mb, "rss_mb": mem.growth_mb, "times": result}
        with record.open("a", encoding="utf-8") as out:
            out.write(json.dumps(row) + "\n")

    gb = size / (1 << 30)

    def mbps(variant: str) -> list[float]:
        return [size_mb / row[0] for row in result[variant]]

    def cpu(variant: str, column: int) -> float:
        return statistics.median(row[column] / gb for row in result[variant])

    def ratios(other: str) -> tuple[float, float, float]:
        r = [o / p for o, p in zip(mbps("ours"), mbps(other), strict=True)]
        return statistics.median(r), min(r), max(r)

    ratio, low, high = ratios("plain")
    vs_streamed, s_low, s_high = ratios("streamed")
    ok = ratio >= 0.7 and mem.growth_mb < 50
    labels = {
        "plain": "plain aiohttp FileResponse   ",
        "streamed": "plain aiohttp StreamResponse ",
        "ours": "companion sealed /download   ",
        "no-aead": "same pipeline without AEAD   ",
    }
    notes = {
        "plain": "sendfile: zero-copy",
        "streamed": "read + write, no crypto",
        "ours": "signed, sealed, progress kept",
        "no-aead": "ceiling of the pipeline",
    }
    lines += [
        f"desktop side: {size_mb} MB sparse file, {rounds} interleaved rounds, loopback, {loop_name} loop, "
        "client in its own process",
        f"  before: {before}",
        f"  offer (stat + SHA-256 of the file): {offer_s:.2f} s",
        "                                   MB/s median / worst    CPU s per GB: server / client",
    ]
    for v in VARIANTS:
        rates = mbps(v)
        lines.append(
            f"  {labels[v]}: {statistics.median(rates):7.0f} / {min(rates):5.0f}"
            f"             {cpu(v, 1):5.2f} / {cpu(v, 2):5.2f}   ({notes[v]})"
        )
    lines += [
        f"  ratio sealed/FileResponse      : {ratio:.0%} (per-round {low:.0%}..{high:.0%})   target >= 70%   "
        f"{'PASS' if ratio >= 0.7 else 'FAIL'}",
        f"  ratio sealed/StreamResponse    : {vs_streamed:.0%} (per-round {s_low:.0%}..{s_high:.0%})",
        f"  server RSS growth while serving: {mem.growth_mb:.1f} MB   target < 50 MB   "
        f"{'PASS' if mem.growth_mb < 50 else 'FAIL'}",
        f"  after: {load()}",
    ]
    return ok, lines


# --- phone side (headless Chromium) ------------------------------------------------------------------------


async def phone_side(page_mb: int, throttled_mb: int) -> tuple[bool, list[str]]:
    from browser import Browser

    lines: list[str] = []
    ok = True
    with tempfile.TemporaryDirectory(prefix="weclaw-bench-page-") as tmp:
        os.environ["WECLAW_HOME"] = str(Path(tmp) / "home")
        service = CompanionService(
            CompanionSettings(auto_accept=True), paths=app_paths(), desktop_name="bench", secrets=Secrets()
        )
        await service.start("127.0.0.1", 0)
        browser = await asyncio.to_thread(Browser)
        try:
            for mb, rate in ((page_mb, 1), (throttled_mb, 4)):
                if mb <= 0:
                    continue
                src = Path(tmp) / f"file-{mb}-{rate}.bin"
                src.write_bytes(os.urandom(mb << 20))
                code = service.new_pairing_code()
                tab = await browser.run(browser.open_phone, code.url)
                await browser.run(tab.page.wait_for_selector, "#send-card:not([hidden])")
                device = max(await service.list_devices(), key=lambda d: d.created_at)
                if rate > 1:
                    cdp = await browser.run(tab.context.new_cdp_session, tab.page)
                    await browser.run(cdp.send, "Emulation.setCPUThrottlingRate", {"rate": rate})
                await browser.run(tab.page.click, "#auto")
                t0 = time.perf_counter()
                transfer = await service.send_files([src], device_id=device.id)
                offered = time.perf_counter()
                await transfer.wait(1200, settled=frozenset({FileState.READY, FileState.FAILED}))
                seconds = time.perf_counter() - offered
                f = next(iter(transfer.files.values()))
                state = f.state.value
                rate_mbps = mb / seconds
                target = rate == 1
                passed = state == "ready" and (rate_mbps >= 33 or not target)
                ok = ok and passed
                label = "no throttling" if rate == 1 else f"CPU throttled {rate}x"
                lines.append(
                    f"  page, {label:<17}: {mb} MB offer->ready in {seconds:.1f} s = {rate_mbps:5.1f} MB/s "
                    f"(hash {offered - t0:.2f} s){'   target >= 33 MB/s ' + ('PASS' if passed else 'FAIL') if target else ''}"
                    f"  [{state}]"
                )
                await browser.run(tab.context.close)
        finally:
            await asyncio.to_thread(browser.close)
            await service.stop()
    return ok, ["phone side: the real page in headless Chromium (Pixel 7), decrypt + verify + IndexedDB", *lines]


async def run(args: argparse.Namespace) -> int:
    ok, lines = await desktop_side(args.size_mb, args.rounds, args.loop, args.record)
    print("\n".join(lines), flush=True)
    if not args.skip_page:
        page_ok, page_lines = await phone_side(args.page_mb, args.throttled_mb)
        print("\n".join(page_lines), flush=True)
        ok = ok and page_ok
    return 0 if ok else 1


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--client":
        pair_url, base_url, size, rounds, pid = (
            sys.argv[2],
            sys.argv[3],
            int(sys.argv[4]),
            int(sys.argv[5]),
            int(sys.argv[6]),
        )
        print(json.dumps(asyncio.run(client(pair_url, base_url, size, rounds, pid))), flush=True)
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--page-mb", type=int, default=256, help="file size for the phone-page run (0: skip)")
    parser.add_argument("--throttled-mb", type=int, default=64, help="file size for the 4x throttled run (0: skip)")
    parser.add_argument("--skip-page", action="store_true", help="desktop side only")
    parser.add_argument("--loop", choices=("asyncio", "qasync"), default="asyncio", help="the server's event loop")
    parser.add_argument("--record", type=Path, help="append this run's raw timings to FILE (one JSON line)")
    args = parser.parse_args()
    return run_on(args.loop, run(args))


def run_on(loop_name: str, main: Coroutine[Any, Any, int]) -> int:
    """Run ``main`` on asyncio's loop or on the app's qasync loop (Qt offscreen, as the desktop app runs)."""
    if loop_name == "asyncio":
        return asyncio.run(main)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from weclaw_desktop.ui.qtloop import WeclawEventLoop

    loop = WeclawEventLoop(QApplication.instance() or QApplication([]))
    asyncio.set_event_loop(loop)
    try:
        result: int = loop.run_until_complete(main)
        return result
    finally:
        loop.close()


if __name__ == "__main__":
    raise SystemExit(main())
