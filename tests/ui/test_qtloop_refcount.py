"""The qasync loop must not leak references to True (PySide6 6.12 signal emit/disconnect on Python 3.11).

Every tool here hands SQLite/SMTP work to a thread; with qasync's signal-based call_soon_threadsafe each
hand-off dropped one reference to True, and a long session (or test run) aborted with "bool_dealloc".
"""

from __future__ import annotations

import asyncio
import gc
import socket
import sys


async def test_thread_handoffs_and_socket_watches_keep_true_alive() -> None:
    gc.collect()
    before = sys.getrefcount(True)
    for _ in range(300):
        assert await asyncio.to_thread(int, "7") == 7
    loop = asyncio.get_running_loop()
    for _ in range(50):
        a, b = socket.socketpair()
        got: asyncio.Future[bytes] = loop.create_future()
        loop.add_reader(a.fileno(), lambda a=a, got=got: got.done() or got.set_result(a.recv(4)))
        b.send(b"ping")
        assert await got == b"ping"
        assert loop.remove_reader(a.fileno()) is True
        a.close()
        b.close()
    gc.collect()
    assert sys.getrefcount(True) >= before - 100  # the bug drops one per hand-off: 350 here
