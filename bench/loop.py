"""Agent loop overhead per round against an instant fake server, and memory after 1,000 turns.

    python bench/loop.py [--turns 1000] [--qasync]

Per round it measures the wall time of a full round inside a turn (plan, stream, store, dispatch, store)
and, separately, the bare provider stream of the same request; the overhead of the loop is the
difference (target: under 5 ms). Memory is the process RSS and the Python heap (tracemalloc) after
warm-up and after ``--turns`` turns of two rounds each (a tool call, then the answer) in fresh sessions.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "agent")]
os.environ["WECLAW_HOME"] = tempfile.mkdtemp(prefix="weclaw-bench-")

from agent_support import make_settings, write_manifest  # noqa: E402
from fakeopenai import FakeOpenAI, call, text_reply, tool_reply  # noqa: E402

from weclaw_desktop.agent.runtime import AgentRuntime  # noqa: E402
from weclaw_desktop.toolkit.base import Origin  # noqa: E402


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def rss_mb() -> float:
    try:
        import psutil

        return float(psutil.Process().memory_info().rss) / 2**20
    except ImportError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def bench(turns: int) -> None:
    async with FakeOpenAI() as fake:
        tools = write_manifest(Path(os.environ["WECLAW_HOME"]) / "tools.json")
        rt = AgentRuntime.create(make_settings(fake), tools_json=tools, api_key="sk-bench-000000", origin=Origin.CLI)
        round_ms: list[float] = []
        marks: list[float] = []

        def on_event(event: object) -> None:
            name = type(event).__name__
            if name in ("RoundStarted", "TurnDone"):
                marks.append(time.perf_counter())

        async def turn(session_id: str) -> None:
            fake.push(tool_reply(call("echo_say", {"text": "x"})), text_reply("ok"))
            marks.clear()
            start = time.perf_counter()
            handle = rt.start_turn(session_id, "echo x", on_event=on_event)
            await handle.wait()
            points = [start, *marks]
            round_ms.extend((b - a) * 1000 for a, b in itertools.pairwise(points[1:]))

        session = await rt.create_session()
        for _ in range(20):
            await turn(session.id)
        round_ms.clear()
        cpu0 = time.process_time()
        for _ in range(200):
            await turn(session.id)
            fake.requests.clear()
            fake.headers.clear()
        cpu_full = (time.process_time() - cpu0) * 1000 / 400
        full = list(round_ms)
        fake.push(tool_reply(call("echo_say", {"text": "x"})), text_reply("ok"))
        await (rt.start_turn(session.id, "echo x")).wait()  # a request to copy for the bare streams

        # the bare stream of the same requests (no planning, storage or tools)
        messages = fake.messages()
        tool_defs = fake.requests[-1].get("tools") or []
        raw: list[float] = []
        cpu0 = time.process_time()
        for i in range(400):
            fake.push(text_reply("ok") if i % 2 else tool_reply(call("echo_say", {"text": "x"})))
            t = time.perf_counter()
            await rt.provider.stream(messages, tool_defs)
            raw.append((time.perf_counter() - t) * 1000)
        cpu_raw = (time.process_time() - cpu0) * 1000 / 400

        print(f"rounds measured: {len(full)} (2 per turn), bare streams: {len(raw)}")
        print(f"full round   median {statistics.median(full):7.2f} ms   p99 {pct(full, 99):7.2f} ms")
        print(f"bare stream  median {statistics.median(raw):7.2f} ms   p99 {pct(raw, 99):7.2f} ms")
        over = statistics.median(full) - statistics.median(raw)
        print(f"loop overhead per round (median difference): {over:.2f} ms  (target < 5 ms)")
        print(
            f"CPU per round (this process, fake server included): full {cpu_full:.2f} ms, bare {cpu_raw:.2f} ms, "
            f"loop {cpu_full - cpu_raw:.2f} ms"
        )

        gc.collect()
        tracemalloc.start()
        rss0, heap0 = rss_mb(), tracemalloc.get_traced_memory()[0]
        t0 = time.perf_counter()
        for i in range(turns):
            s = await rt.create_session() if i % 10 == 0 else session
            session = s
            await turn(s.id)
            fake.requests.clear()
            fake.headers.clear()
        elapsed = time.perf_counter() - t0
        gc.collect()
        rss1, heap1 = rss_mb(), tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        print(f"{turns} turns in {elapsed:.1f} s ({elapsed / turns * 1000:.1f} ms per turn)")
        print(f"RSS {rss0:.1f} MB -> {rss1:.1f} MB (+{rss1 - rss0:.1f} MB)")
        print(f"Python heap +{(heap1 - heap0) / 2**20:.2f} MB after {turns} turns")
        await rt.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--qasync", action="store_true", help="run on the qasync loop the app uses")
    args = parser.parse_args()
    if args.qasync:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        from PySide6.QtWidgets import QApplication

        from weclaw_desktop.ui.qtloop import WeclawEventLoop

        loop = WeclawEventLoop(QApplication.instance() or QApplication([]))
        asyncio.set_event_loop(loop)
        loop.run_until_complete(bench(args.turns))
    else:
        asyncio.run(bench(args.turns))


if __name__ == "__main__":
    main()
