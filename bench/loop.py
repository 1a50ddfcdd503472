"""Agent loop overhead per round against an instant fake server, and memory after 1,000 turns.

    python bench/loop.py [--turns 1000] [--qasync]

Per round it measures the wall time of a full round inside a turn (plan, stream, store, dispatch, store)
and the time spent inside the provider's stream in that round (the HTTP exchange with the fake server);
the loop's overhead is the difference, round by round (target: median under 5 ms). Memory is the process RSS and the Python heap (tracemalloc) after
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

from weclaw_desktop.agent.provider import Provider  # noqa: E402
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

        # time spent inside the provider's stream (HTTP to the fake server) during each round; on the class, as
        # a turn streams through the chat's own provider (runtime_chats), not necessarily rt.loop.provider
        plain_stream = Provider.stream
        stream_ms: list[float] = []

        async def timed_stream(self: Provider, *args: object, **kwargs: object) -> object:
            t = time.perf_counter()
            try:
                return await plain_stream(self, *args, **kwargs)  # type: ignore[arg-type]
            finally:
                stream_ms.append((time.perf_counter() - t) * 1000)

        Provider.stream = timed_stream  # type: ignore[method-assign,assignment]
        session = await rt.create_session()
        for _ in range(20):
            await turn(session.id)
        round_ms.clear()
        stream_ms.clear()
        cpu0 = time.process_time()
        for _ in range(200):  # each measured turn in a fresh conversation: same request size every time
            session = await rt.create_session()
            await turn(session.id)
            fake.requests.clear()
            fake.headers.clear()
        cpu_full = (time.process_time() - cpu0) * 1000 / 400
        Provider.stream = plain_stream  # type: ignore[method-assign]
        overhead = [r - s for r, s in zip(round_ms, stream_ms, strict=True)]

        print(f"rounds measured: {len(round_ms)} (2 per turn: a tool call, then the answer)")
        print(f"full round        median {statistics.median(round_ms):7.2f} ms   p99 {pct(round_ms, 99):7.2f} ms")
        print(f"  of which stream median {statistics.median(stream_ms):7.2f} ms   p99 {pct(stream_ms, 99):7.2f} ms")
        print(
            f"loop overhead     median {statistics.median(overhead):7.2f} ms   p99 {pct(overhead, 99):7.2f} ms"
            "   (target: median < 5 ms)"
        )
        print(f"CPU per round (this process, fake server included): {cpu_full:.2f} ms")

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
        print(f"{turns} turns in {elapsed:.1f} s with tracemalloc on ({elapsed / turns * 1000:.1f} ms per turn)")
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
