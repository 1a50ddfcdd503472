"""Small helpers shared by the built-in tools: sizes, output caps, thread-safe progress, free file names."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from pathlib import Path

from weclaw_desktop.toolkit.base import ToolContext

Progress = Callable[[float | None, str], None]


def human_size(size: float) -> str:
    """1536 -> '1.5 KB'."""
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(size) < 1024 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TB"


def cap_head_tail(text: str, limit: int) -> tuple[str, bool]:
    """``text`` cut to about ``limit`` characters keeping the head and the tail, and whether it was cut."""
    if len(text) <= limit:
        return text, False
    head = limit * 2 // 3
    tail = limit - head
    omitted = len(text) - head - tail
    return f"{text[:head]}\n… [{omitted} characters omitted] …\n{text[-tail:]}", True


def threadsafe_progress(ctx: ToolContext) -> Progress:
    """A progress function that worker threads may call: it hops to the event loop before reporting."""
    loop = asyncio.get_running_loop()
    owner = threading.get_ident()

    def report(fraction: float | None, message: str) -> None:
        if threading.get_ident() == owner:
            ctx.progress(fraction, message)
            return
        with contextlib.suppress(RuntimeError):  # the loop is closing
            loop.call_soon_threadsafe(ctx.progress, fraction, message)

    return report


def free_name(path: Path) -> Path:
    """``path`` if it does not exist, else ``name (2).ext``, ``name (3).ext`` ... (never overwrites)."""
    if not path.exists() and not path.is_symlink():
        return path
    stem, suffix = path.stem, path.suffix
    if path.name.endswith(".tar.gz"):
        stem, suffix = path.name[: -len(".tar.gz")], ".tar.gz"
    n = 2
    while True:
        candidate = path.with_name(f"{stem} ({n}){suffix}")
        if not candidate.exists() and not candidate.is_symlink():
            return candidate
        n += 1
