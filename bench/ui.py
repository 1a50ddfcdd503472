"""GUI speed figures.

    python bench/ui.py [--runs 7]

1. Start-up: wall time from launching ``python -m weclaw_desktop`` (offscreen, empty data folder) to the
   main window being shown. Target: under 1.5 s.
2. Event-loop stall: the longest delay of a 5 ms heartbeat on the qasync loop while the visible chat
   streams 2,000 tokens and, in another chat, a tool does 2 s of CPU-bound work in a worker thread.
   Target: under 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("LANG", "C.UTF-8")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "bench")]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def startup(runs: int) -> tuple[list[float], list[float]]:
    """Wall time to the window shown, and the CPU time (user + system) the process used."""
    times: list[float] = []
    cpu: list[float] = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        env = dict(os.environ, WECLAW_HOME=tempfile.mkdtemp(prefix="weclaw-bench-"), WECLAW_EXIT_AFTER_SHOW="1")
        t0 = time.time()
        out = subprocess.run(
            [sys.executable, "-m", "weclaw_desktop"], cwd=ROOT, env=env, capture_output=True, text=True, check=True
        ).stdout
        shown = float(next(line for line in out.splitlines() if line.startswith("shown ")).split()[1])
        times.append(shown - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return times, cpu


class ServerThread:
    """The fake OpenAI server on its own asyncio loop in a thread, like a real endpoint: its pacing
    does not depend on the UI loop being measured."""

    def __init__(self) -> None:
        from fakeopenai import FakeOpenAI

        self.loop = asyncio.new_event_loop()
        self.fake = FakeOpenAI()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.fake.start(), self.loop).result(10)

    def push(self, *replies: object) -> None:
        self.loop.call_soon_threadsafe(self.fake.push, *replies)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.fake.stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


async def stall(delay_s: float) -> dict[str, float]:
    from fakeopenai import call, text_reply, tool_reply

    from weclaw_desktop.agent import events as ev
    from weclaw_desktop.app import create_runtime
    from weclaw_desktop.settings import Settings
    from weclaw_desktop.ui.boot import build_window

    server = ServerThread()
    fake = server.fake
    manifest = {
        "version": 1,
        "tools": {
            "block": {
                "module": "ui_bench_tools",
                "class": "BlockTool",
                "actions": ["burn"],
                "description": {"en": "Blocking work"},
                "display": {"name": {"en": "Block"}, "icon": "chip", "category": "system"},
                "timeout_s": 60,
            }
        },
        "profiles": {"full": ["*"]},
    }
    tools_json = Path(tempfile.mkdtemp()) / "tools.json"
    tools_json.write_text(json.dumps(manifest), encoding="utf-8")
    settings = Settings()
    settings.provider.base_url, settings.provider.model, settings.provider.preset = fake.base_url, "m", "custom"
    settings.agent.exposure = "all"
    window = build_window(settings, tools_json=tools_json)
    runtime = create_runtime(window, api_key="sk-bench", logs=False)
    window.resize(1280, 800)
    window.show()
    await window.controller.idle()

    tokens = [f"tok{i} " if i % 40 else f"tok{i}\n\n" for i in range(2000)]
    # the background chat's tool call first (so the worker thread is busy while the visible chat streams)
    server.push(tool_reply(call("block_burn", {"seconds": 2.0})))
    server.push(text_reply(*tokens, delay_s=delay_s))  # the visible chat: 2,000 tokens
    server.push(text_reply("tool done"))
    await asyncio.sleep(0.05)
    background = await runtime.create_session("background")
    started = asyncio.Event()
    bg = runtime.start_turn(
        background.id, "burn the CPU", on_event=lambda e: isinstance(e, ev.ToolCallStarted) and started.set()
    )
    await started.wait()  # the tool call is now running in its worker thread

    worst = 0.0
    lateness: list[float] = []
    beating = True

    async def heartbeat() -> None:
        nonlocal worst
        while beating:
            t = time.perf_counter()
            await asyncio.sleep(0.005)
            late = time.perf_counter() - t - 0.005
            lateness.append(late)
            worst = max(worst, late)

    beat = asyncio.ensure_future(heartbeat())
    t0 = time.perf_counter()
    handle = await window.controller.send("stream a long answer")
    assert handle is not None
    await handle.wait()
    streamed_s = time.perf_counter() - t0
    await bg.wait()
    beating = False
    await beat
    message = window.chat.messages[-1]
    result = {
        "stall_max_ms": worst * 1000,
        "stall_p99_ms": pct(lateness, 0.99) * 1000,
        "stall_median_ms": statistics.median(lateness) * 1000,
        "stream_s": streamed_s,
        "tokens": float(len(tokens)),
        "renders": float(message.renders),
        "tool_status_ok": float(bg.done_event is not None and bg.done_event.reason == "completed"),
    }
    window.quit_app()
    await window.controller.shutdown()
    server.stop()
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    os.environ["WECLAW_HOME"] = tempfile.mkdtemp(prefix="weclaw-bench-")

    times, cpu = startup(args.runs)
    print(
        f"startup to window shown ({args.runs} runs): median {statistics.median(times):.3f} s, "
        f"p99 {pct(times, 0.99):.3f} s, min {min(times):.3f} s  (target < 1.5 s); "
        f"CPU time per start: median {statistics.median(cpu):.3f} s; load average now {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} CPUs"
    )

    from weclaw_desktop.ui.boot import qt_application
    from weclaw_desktop.ui.qtloop import WeclawEventLoop

    app = qt_application(sys.argv[:1])  # as the app does (also sets the GIL switch interval)
    app.setQuitOnLastWindowClosed(False)
    loop = WeclawEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        for label, delay in (("paced 1 ms apart", 0.001), ("burst (all buffered at once)", 0.0)):
            r = loop.run_until_complete(stall(delay))
            print(
                f"event-loop stall, {int(r['tokens'])} tokens {label}, a tool burning 2 s of CPU off-loop: "
                f"max {r['stall_max_ms']:.1f} ms, p99 {r['stall_p99_ms']:.1f} ms, "
                f"median {r['stall_median_ms']:.2f} ms (target max < 50 ms); stream {r['stream_s']:.2f} s, "
                f"{int(r['renders'])} Markdown renders; tool turn completed: {bool(r['tool_status_ok'])}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
