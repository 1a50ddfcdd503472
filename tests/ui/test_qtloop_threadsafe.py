"""The tools lean on asyncio.to_thread; guard the qtloop fix it depends on (see weclaw_desktop/ui/qtloop.py).

PySide6 6.12's ``Signal.emit`` drops a reference to ``True`` on every call; qasync used ``emit`` for every
``call_soon_threadsafe`` (so every ``asyncio.to_thread``), and Python 3.11 aborted with "bool_dealloc"
after about a thousand tool calls.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import threading

import pytest

from weclaw_desktop.ui.qtloop import WeclawEventLoop


@pytest.mark.asyncio
async def test_running_loop_is_the_weclaw_loop() -> None:
    assert isinstance(asyncio.get_running_loop(), WeclawEventLoop)


@pytest.mark.asyncio
async def test_to_thread_does_not_leak_references_to_true() -> None:
    gc.collect()
    before = sys.getrefcount(True)
    for _ in range(300):
        assert await asyncio.to_thread(lambda: True) is True
    gc.collect()
    assert abs(sys.getrefcount(True) - before) < 50  # with qasync's signal-based version it fell by ~300


@pytest.mark.asyncio
async def test_call_soon_threadsafe_from_a_worker_thread_runs_in_order() -> None:
    loop = asyncio.get_running_loop()
    seen: list[int] = []
    done = asyncio.Event()

    def worker() -> None:
        for i in range(100):
            loop.call_soon_threadsafe(seen.append, i)
        loop.call_soon_threadsafe(done.set)

    threading.Thread(target=worker).start()
    await asyncio.wait_for(done.wait(), 5)
    assert seen == list(range(100))
