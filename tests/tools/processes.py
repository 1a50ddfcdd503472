"""Test helpers for the tool tests: process liveness and polling without blocking the loop."""

from __future__ import annotations

import asyncio
from pathlib import Path

from polling import reached, until


def process_gone(pid: int) -> bool:
    """True when ``pid`` no longer runs (a zombie waiting for a reaper counts as gone)."""
    import psutil

    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def wait_for_file(path: Path, within: float = 10.0) -> str:
    """Poll (without blocking the loop) until ``path`` holds text; return it."""

    async def text() -> str:
        found = await asyncio.to_thread(lambda: path.read_text() if path.exists() else "")
        return found if found.strip() else ""

    return await until(text, within=within, interval=0.05, message=f"{path} was not written")


async def gone_soon(pid: int, within: float = 5.0) -> bool:
    """True once ``pid`` is gone; SIGKILL is delivered asynchronously, so allow the kernel a moment."""
    return await reached(lambda: process_gone(pid), within=within, interval=0.02)
