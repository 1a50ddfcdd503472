"""Test helpers for the tool tests: process liveness and polling without blocking the loop."""

from __future__ import annotations

import asyncio
from pathlib import Path


def process_gone(pid: int) -> bool:
    """True when ``pid`` no longer runs (a zombie waiting for a reaper counts as gone)."""
    import psutil

    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def wait_for_file(path: Path, within: float = 10.0) -> str:
    """Poll (without blocking the loop) until ``path`` holds text; return it."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while loop.time() < deadline:
        text = await asyncio.to_thread(lambda: path.read_text() if path.exists() else "")
        if text.strip():
            return text
        await asyncio.sleep(0.05)
    raise AssertionError(f"{path} was not written within {within} s")


async def gone_soon(pid: int, within: float = 5.0) -> bool:
    """True once ``pid`` is gone; SIGKILL is delivered asynchronously, so allow the kernel a moment."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not process_gone(pid):
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True
