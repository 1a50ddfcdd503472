"""What the message actions cost in a long chat (#16 item 3): after a turn (and after opening a chat) the
actions read the branch positions, per-exchange usage and sent files of the chat, then rebuild the bars that
changed. Prints, per chat size, the wall time of that refresh, the part spent on the UI thread (marking the
items and rebuilding bars) and the longest event-loop stall while it ran; and the cost of paging to another
version (select + reload of the chat).

    QT_QPA_PLATFORM=offscreen python bench/actions.py [--sizes 1000,5000] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("LANG", "C.UTF-8")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "bench")]


async def measure(size: int, runs: int) -> None:
    from ui import Heartbeat, ServerThread, close, make_window, settle
    from ui_chat_data import seed

    home = tempfile.mkdtemp(prefix=f"weclaw-bench-actions{size}-")
    server = ServerThread()
    window, runtime = await make_window(server.fake, home)
    info = await runtime.create_session("big")
    rows = await seed(runtime.history, info.id, size)
    # a branch near the end: an edited version of the last question, so the pager is there
    leaf = await runtime.history.branches.leaf(info.id)
    parent = await runtime.history.branches.parent_of(info.id, leaf)
    await runtime.history.branches.record(info.id, "edited00001", parent=parent or "", kind="edit")
    await runtime.history.begin_turn(info.id, "edited00001", "the question, edited")
    await runtime.history.add_assistant(info.id, "edited00001", 1, "another answer", [])
    await runtime.history.finish_turn("edited00001", "completed", 1)
    await window.controller.open_session(info.id)
    await settle(lambda: window.chat.has_content, 120)
    await window.controller.idle()
    actions = window.message_actions
    beat = Heartbeat()
    walls, marks, stalls, pages = [], [], [], []
    original = actions.mark

    def timed_mark() -> None:
        t = time.perf_counter()
        original()
        marks.append((time.perf_counter() - t) * 1000)

    actions.mark = timed_mark  # type: ignore[method-assign]
    for _ in range(runs):
        for item in window.chat.message_items():
            item.data.pop("actions_signature", None)  # every live bar is rebuilt, as after a turn at worst
        m = beat.mark()
        t0 = time.perf_counter()
        await actions.refresh()
        walls.append((time.perf_counter() - t0) * 1000)
        await asyncio.sleep(0.05)
        stalls.append(beat.worst(m))
    for target in ("edited00001", leaf) * max(1, runs // 2):
        t0 = time.perf_counter()
        await actions.select(target)
        await window.controller.idle()
        pages.append((time.perf_counter() - t0) * 1000)
    await beat.stop()
    print(
        f"{rows} stored rows ({len(window.chat.items)} items shown): refresh median {statistics.median(walls):.0f} ms "
        f"(max {max(walls):.0f}), of it on the UI thread median {statistics.median(marks):.1f} ms "
        f"(max {max(marks):.1f}), longest stall {max(stalls):.0f} ms; paging to another version (select + reload) "
        f"median {statistics.median(pages):.0f} ms",
        flush=True,
    )
    await close(window, server)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,5000")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    os.environ["WECLAW_HOME"] = tempfile.mkdtemp(prefix="weclaw-bench-")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    from weclaw_desktop.ui.boot import qt_application
    from weclaw_desktop.ui.qtloop import WeclawEventLoop
    from weclaw_desktop.ui.theme import apply_theme

    app = qt_application(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    apply_theme(app, "light")
    loop = WeclawEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        for size in (int(s) for s in args.sizes.split(",")):
            loop.run_until_complete(measure(size, args.runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
