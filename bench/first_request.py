"""The UI loop's longest stall around the first model request (and the first after a switch), over https.

    python bench/first_request.py [--runs 5] [--code DIR]

Each run is a fresh process (the costs measured are paid once per process): a QApplication (offscreen)
on the app's qasync loop (:class:`WeclawEventLoop`), the agent layer imported beforehand (the app imports
it in a worker thread after the window is shown), a fake OpenAI server over https in its own thread (a
throwaway certificate, trusted through SSL_CERT_FILE = the system's CA bundle plus it: loading the bundle
costs what it costs on a user's machine). A 2 ms heartbeat on the loop measures how late it wakes up
while the provider sends (1) its first request, (2) a second one, (3) the first request of a new provider
(a switch of model or configuration).

``--code DIR`` runs the children on another checkout's package (e.g. main before a change); the bench and
its fake server come from this one. Prints, per request, the median over runs of the longest stall and of
the request's wall time, in milliseconds. Target: no stall over 16 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
STEPS = ("first request", "second request", "first after a switch")


def _child() -> None:
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "tools")]
    sys.path.append(str(ROOT))  # the package: PYTHONPATH (--code) first
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from fakeopenai import FakeOpenAI, text_reply
    from PySide6.QtWidgets import QApplication
    from smtp_server import make_certificate

    import weclaw_desktop.agent.runtime  # noqa: F401  (the app imports it before the first message)
    from weclaw_desktop.agent.provider import Provider, ProviderConfig
    from weclaw_desktop.ui.qtloop import WeclawEventLoop

    folder = Path(tempfile.mkdtemp(prefix="weclaw-bench-tls-"))
    cert, key = make_certificate(folder)
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert, key)
    system = ssl.get_default_verify_paths().cafile
    bundle = folder / "bundle.pem"
    bundle.write_bytes((Path(system).read_bytes() if system else b"") + b"\n" + cert.read_bytes())
    os.environ["SSL_CERT_FILE"] = str(bundle)

    server_loop = asyncio.new_event_loop()
    fake = FakeOpenAI(tls=server_ctx)
    threading.Thread(target=server_loop.run_forever, daemon=True).start()
    asyncio.run_coroutine_threadsafe(fake.start(), server_loop).result(10)
    server_loop.call_soon_threadsafe(fake.push, *[text_reply("hello ", "there") for _ in STEPS])

    sys.setswitchinterval(0.001)  # as the app runs (ui/boot.py UI_SWITCH_INTERVAL_S)
    app = QApplication.instance() or QApplication([])
    loop = WeclawEventLoop(app)
    asyncio.set_event_loop(loop)
    beats: list[tuple[float, float]] = []  # (when it woke, how late in ms)
    running = [True]

    async def heartbeat() -> None:
        while running[0]:
            t = time.perf_counter()
            await asyncio.sleep(0.002)
            now = time.perf_counter()
            beats.append((now, (now - t - 0.002) * 1000))

    async def measure() -> dict[str, Any]:
        beat = asyncio.ensure_future(heartbeat())
        await asyncio.sleep(0.3)
        out: dict[str, Any] = {}

        def config(model: str) -> Any:
            return ProviderConfig(base_url=fake.base_url, model=model, api_key="sk-bench", max_retries=0)

        first = Provider(config("fake-model"))
        for step, provider in zip(STEPS, (first, first, Provider(config("fake-model-2"))), strict=True):
            start = time.perf_counter()
            reply = await provider.stream([{"role": "user", "content": "hi"}])
            end = time.perf_counter()
            assert reply.text == "hello there", reply.text
            await asyncio.sleep(0.01)  # the beat that was running when the request ended
            stalls = [late for when, late in beats if start < when <= end + 0.01]
            out[step] = {"stall_ms": max(stalls, default=0.0), "wall_ms": (end - start) * 1000}
        running[0] = False
        await beat
        return out

    with loop:
        result = loop.run_until_complete(measure())
    print(json.dumps(result))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--code", help="run the children on this checkout's weclaw_desktop (default: this one)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child()
        return 0
    env = {**os.environ, "PYTHONPATH": str(Path(args.code).resolve() if args.code else ROOT), "LANG": "C.UTF-8"}
    runs: list[dict[str, Any]] = []
    for _ in range(args.runs):
        done = subprocess.run(
            [sys.executable, __file__, "--child"], env=env, capture_output=True, text=True, timeout=120, check=False
        )
        if done.returncode != 0:
            print(done.stderr[-2000:], file=sys.stderr)
            return 1
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"code: {args.code or ROOT}   runs: {args.runs}   (median over runs; max over runs in brackets)")
    print(f"{'':<22} {'longest stall ms':>22} {'request wall ms':>22}")
    for step in STEPS:
        stalls = [r[step]["stall_ms"] for r in runs]
        walls = [r[step]["wall_ms"] for r in runs]
        print(
            f"{step:<22} {statistics.median(stalls):12.1f} [{max(stalls):6.1f}] "
            f"{statistics.median(walls):12.1f} [{max(walls):6.1f}]"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
