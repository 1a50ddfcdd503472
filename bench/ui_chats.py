"""bench/ui.py scenarios over stored chats: opening them (``open``) and scrolling them (``scroll``).

``scroll``: a stored chat of N mixed rows, opened at start-up, then scrolled from the end to the top three
ways — a page every 30 ms (dragging the scroll bar), a mouse wheel notch (3 steps of 48 px) every 16 ms,
and a trackpad-like 24 px every 8 ms — each from the end, at most ``--scroll-steps`` steps. For each: the
longest stall, p99, how many heartbeats were over 16 ms, and *gap frames*: steps after which part of the
screen showed no widget yet (a blank where an item will be). Target: no stall over 16 ms, no gaps at
wheel speed.
"""

from __future__ import annotations

import asyncio
import gc
import tempfile
import time
from typing import Any

from ui_harness import (
    Heartbeat,
    PaintWatch,
    ServerThread,
    close,
    fmt_ms,
    make_window,
    pct,
    rss_mb,
    settle,
    show_chat,
    wait_paint,
)


async def open_chats(sizes: list[int]) -> None:
    from ui_chat_data import seed

    for size in sizes:
        home = tempfile.mkdtemp(prefix=f"weclaw-bench-open{size}-")
        server = ServerThread()
        # seed through the real history store (a runtime without a window)
        seeder, runtime = await make_window(server.fake, home)
        info = await runtime.create_session("big")
        t_seed = time.perf_counter()
        rows = await seed(runtime.history, info.id, size)
        seed_s = time.perf_counter() - t_seed
        await close(seeder)
        gc.collect()

        # start-up with this chat as the latest: attach opens it
        window, _ = await make_window(server.fake, home, attach=False)
        await asyncio.sleep(0.2)
        gc.collect()
        rss_base = rss_mb()
        watch = PaintWatch(window)
        beat = Heartbeat()
        mark = beat.mark()
        t0 = time.perf_counter()
        from weclaw_desktop.app import create_runtime

        create_runtime(window, api_key="sk-bench", logs=False)
        await settle(lambda w=window: bool(w.chat.has_content), 120)
        forced = show_chat(window)
        startup_paint = await wait_paint(watch, t0)
        await asyncio.sleep(0.5)
        startup_stall = beat.worst(mark)
        gc.collect()
        rss_startup = rss_mb()

        # from an empty chat, open the big one
        await window.controller.new_session()
        await asyncio.sleep(0.3)
        gc.collect()
        await asyncio.sleep(0.1)
        rss0 = rss_mb()
        mark = beat.mark()
        t0 = time.perf_counter()
        await window.controller.open_session(info.id)
        forced = show_chat(window) or forced
        open_paint = await wait_paint(watch, t0)
        await asyncio.sleep(0.6)
        open_stall = beat.worst(mark)
        gc.collect()
        rss_open = rss_mb()

        # scroll up a page every 30 ms
        await asyncio.sleep(0.05)  # the beat running through gc.collect() is not the scroll's
        bar = window.chat.verticalScrollBar()
        mark = beat.mark()
        pages = 0
        while bar.value() > bar.minimum() and pages < 150:
            bar.setValue(bar.value() - max(1, window.chat.viewport().height()))
            pages += 1
            await asyncio.sleep(0.03)
        await asyncio.sleep(0.2)
        scroll = beat.since(mark)

        # leave it
        await window.controller.new_session()
        await asyncio.sleep(0.5)
        gc.collect()
        await asyncio.sleep(0.2)
        gc.collect()
        rss_left = rss_mb()
        await beat.stop()
        print(
            f"open stored chat, {rows} rows ({size} asked; seeded in {seed_s:.1f} s): "
            f"start-up with it latest: content painted {fmt_ms(startup_paint)}, longest stall "
            f"{startup_stall:.0f} ms, RSS +{rss_startup - rss_base:.0f} MB; opened from another chat: first paint {fmt_ms(open_paint)}, longest stall "
            f"{open_stall:.0f} ms, RSS +{rss_open - rss0:.0f} MB; scrolling {pages} pages: longest stall "
            f"{max(scroll, default=0):.1f} ms, p99 {pct(scroll, 0.99):.1f} ms; after leaving: RSS "
            f"{rss_left - rss0:+.0f} MB vs before opening, {rss_left - rss_base:+.0f} MB vs before the start-up"
            + (" [the window kept the welcome page: the bench switched it to the chat]" if forced else ""),
            flush=True,
        )
        await close(window, server)
        gc.collect()


def gaps(chat: Any) -> int:
    """Pixels of the screen where an item is but its widget is not (yet): what the user sees as blank."""
    bar = chat.verticalScrollBar()
    top, page = bar.value(), chat.viewport().height()
    chat._ensure_offsets()
    missing = 0
    offsets = chat._offsets
    for i in range(chat._item_at(top), len(chat.items)):
        item = chat.items[i]
        start, end = offsets[i], offsets[i + 1]
        if end < top:
            continue
        if start > top + page:
            break
        if chat.widget_of(item) is None:
            missing += min(end, top + page) - max(start, top)
    return max(0, missing)


async def scroll(sizes: list[int], max_steps: int) -> None:
    from ui_chat_data import seed

    from weclaw_desktop.app import create_runtime

    for size in sizes:
        home = tempfile.mkdtemp(prefix=f"weclaw-bench-scroll{size}-")
        server = ServerThread()
        seeder, runtime = await make_window(server.fake, home)
        info = await runtime.create_session("big")
        rows = await seed(runtime.history, info.id, size)
        await close(seeder)
        gc.collect()
        window, _ = await make_window(server.fake, home, attach=False)
        create_runtime(window, api_key="sk-bench", logs=False)
        await settle(lambda w=window: bool(w.chat.has_content), 120)
        show_chat(window)
        await asyncio.sleep(1.5)  # opened: the idle work after opening is not the scroll's
        chat = window.chat
        bar = chat.verticalScrollBar()
        beat = Heartbeat()
        parts = []
        for label, step_px, every_s in (
            ("a page every 30 ms", 0, 0.030),
            ("a wheel notch (144 px) every 16 ms", 144, 0.016),
            ("24 px every 8 ms", 24, 0.008),
        ):
            chat.scroll_to_end()
            await asyncio.sleep(1.0)
            gc.collect()
            await asyncio.sleep(0.05)  # the beat running through gc.collect() is not the scroll's
            mark = beat.mark()
            made0 = chat.made
            steps = gap_steps = gap_px = 0
            t0 = time.perf_counter()
            while bar.value() > bar.minimum() and steps < max_steps:
                bar.setValue(bar.value() - (step_px or max(1, chat.viewport().height())))
                steps += 1
                await asyncio.sleep(every_s)
                missing = gaps(chat)
                if missing:
                    gap_steps += 1
                    gap_px = max(gap_px, missing)
            wall = time.perf_counter() - t0
            await asyncio.sleep(0.2)
            s, cpu = beat.since(mark), beat.cpu_since(mark)
            parts.append(
                f"{label}: {steps} steps in {wall:.1f} s, longest stall {max(s, default=0):.1f} ms, p99 "
                f"{pct(s, 0.99):.1f} ms, {sum(1 for v in s if v > 16)} beats over 16 ms; UI-thread CPU in one beat: "
                f"max {max(cpu, default=0):.1f} ms, p99 {pct(cpu, 0.99):.1f} ms, {sum(1 for v in cpu if v > 16)} over "
                f"16 ms; gap frames {gap_steps} (largest {gap_px} px); widgets made {chat.made - made0}"
            )
        await beat.stop()
        print(
            f"scroll stored chat, {rows} rows ({size} asked), RSS {rss_mb():.0f} MB:\n  " + "\n  ".join(parts),
            flush=True,
        )
        await close(window, server)
        gc.collect()
