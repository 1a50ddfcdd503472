"""Guards for the qasync loop fix in weclaw_desktop/ui/qtloop.py (found while building these tools).

PySide6 6.12's ``Signal.emit`` and ``disconnect`` drop a reference to ``True`` on every call; qasync used
``emit`` for every ``call_soon_threadsafe`` (so every ``asyncio.to_thread``), and Python 3.11 aborted with
"bool_dealloc" after about a thousand tool calls. These tests fail if either safeguard goes away.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import threading

import pytest

from weclaw_desktop.ui.qtloop import _BOOL_REFCOUNT_RESERVE, WeclawEventLoop


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


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="bools are immortal on 3.12+")
def test_bools_have_a_reserve_on_python_311() -> None:
    assert sys.getrefcount(True) > _BOOL_REFCOUNT_RESERVE // 2
    assert sys.getrefcount(False) > _BOOL_REFCOUNT_RESERVE // 2
