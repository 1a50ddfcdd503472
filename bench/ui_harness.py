"""The shared harness of bench/ui.py: the real window and runtime against a fake OpenAI server in its own
thread, a heartbeat on the qasync loop, paint watching, polling."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def rss_mb() -> float:
    import psutil

    return float(psutil.Process().memory_info().rss) / 2**20


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


class ServerProcess:
    """The fake OpenAI server in its own process (bench/fake_server_proc.py): its work never holds this
    process's GIL, as a remote endpoint's never does. ``push`` sends scripted replies; ``fake.base_url``."""

    def __init__(self) -> None:
        import subprocess
        import sys
        from types import SimpleNamespace

        script = Path(__file__).with_name("fake_server_proc.py")
        self.proc = subprocess.Popen(
            [sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        self.fake = SimpleNamespace(base_url=self.proc.stdout.readline().strip())

    def push(self, *replies: object) -> None:
        import base64
        import pickle

        assert self.proc.stdin is not None
        self.proc.stdin.write(base64.b64encode(pickle.dumps(replies)).decode() + "\n")
        self.proc.stdin.flush()

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except Exception:
            self.proc.kill()


class Heartbeat:
    """How late a 5 ms sleep wakes up, sampled continuously; ``mark()`` starts a new window of samples.

    ``cpu`` holds, per beat, the main thread's CPU time during that beat: on a shared, loaded machine a late
    beat can be the process waiting for a CPU; a beat that was late *and* used the CPU was our work."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self.cpu: list[float] = []
        self._running = True
        self._task = asyncio.ensure_future(self._beat())

    async def _beat(self) -> None:
        while self._running:
            t = time.perf_counter()
            c = time.thread_time()
            await asyncio.sleep(0.005)
            self.samples.append((time.perf_counter() - t - 0.005) * 1000)
            self.cpu.append((time.thread_time() - c) * 1000)

    def mark(self) -> int:
        return len(self.samples)

    def since(self, mark: int) -> list[float]:
        return self.samples[mark:]

    def cpu_since(self, mark: int) -> list[float]:
        return self.cpu[mark:]

    def worst(self, mark: int) -> float:
        return max(self.since(mark), default=0.0)

    async def stop(self) -> None:
        self._running = False
        await self._task


def manifest(extra_block_actions: bool = True) -> Path:
    actions = ["burn", "quick", "wait"] if extra_block_actions else ["burn"]
    data = {
        "version": 1,
        "tools": {
            "block": {
                "module": "ui_bench_tools",
                "class": "BlockTool",
                "actions": actions,
                "description": {"en": "Blocking work"},
                "display": {"name": {"en": "Block"}, "icon": "chip", "category": "system"},
                "timeout_s": 60,
                "concurrency": 64,
            }
        },
        "profiles": {"full": ["*"]},
    }
    path = Path(tempfile.mkdtemp(prefix="weclaw-bench-")) / "tools.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


async def make_window(fake: Any, home: str | None = None, *, attach: bool = True) -> tuple[Any, Any]:
    from weclaw_desktop.app import create_runtime
    from weclaw_desktop.settings import Settings
    from weclaw_desktop.ui.boot import build_window

    if home is not None:
        os.environ["WECLAW_HOME"] = home
    app_gc()  # as the app collects: on the Qt thread, from a timer
    settings = Settings()
    settings.provider.base_url, settings.provider.model, settings.provider.preset = fake.base_url, "m", "custom"
    settings.agent.exposure = "all"
    # scripted replies: a chat's title side request (after its first exchange) would take the next reply
    settings.agent.model_titles = False
    window = build_window(settings, tools_json=manifest())
    window.resize(1280, 800)
    window.show()
    runtime = None
    if attach:
        runtime = create_runtime(window, api_key="sk-bench", logs=False)
    return window, runtime


_COLLECTOR: Any = None


def app_gc() -> Any:
    """The app's garbage collection (weclaw_desktop/app/root.py): only on the Qt thread, from a timer, with
    what start-up made frozen out of the way (``freeze()``: the app does it 4 s after start-up)."""
    global _COLLECTOR
    if _COLLECTOR is None:
        from weclaw_desktop.ui.qtloop import MainThreadGC

        _COLLECTOR = MainThreadGC(freeze_after_ms=None)
        _COLLECTOR.start()
    return _COLLECTOR


async def warm_up(window: Any, server: ServerThread | ServerProcess) -> None:
    """One short turn first, so one-off costs (importing the SDK, the first connection's TLS context) are not
    counted as the scenario's stalls; then an empty chat, and start-up's objects frozen as the app does."""
    from fakeopenai import text_reply

    server.push(text_reply("warm"))
    await asyncio.sleep(0.02)
    handle = await window.controller.send("warm up")
    if handle is not None:
        await handle.wait()
    await window.controller.new_session()
    await asyncio.sleep(0.1)
    app_gc().freeze()


async def close(window: Any, server: ServerThread | ServerProcess | None = None) -> None:
    window.quit_app()
    await window.controller.shutdown()
    window.deleteLater()
    await asyncio.sleep(0.05)
    if server is not None:
        server.stop()


class PaintWatch:
    """Times of the chat viewport's paints that showed content."""

    def __init__(self, window: Any) -> None:
        from PySide6.QtCore import QEvent, QObject

        chat = window.chat

        class Filter(QObject):
            def __init__(self, sink: list[float]) -> None:
                super().__init__()
                self.sink = sink

            def eventFilter(self, obj: Any, event: Any) -> bool:
                if event.type() == QEvent.Type.Paint and chat.has_content:
                    self.sink.append(time.perf_counter())
                return False

        self.paints: list[float] = []
        self._filter = Filter(self.paints)
        self._targets = [chat.viewport(), *chat.viewport().findChildren(QObject)]
        chat.viewport().installEventFilter(self._filter)
        from PySide6.QtWidgets import QScrollArea

        if isinstance(chat, QScrollArea) and chat.widget() is not None:  # main before #17
            chat.widget().installEventFilter(self._filter)

    def first_after(self, t0: float) -> float | None:
        later = [t for t in self.paints if t >= t0]
        return (later[0] - t0) * 1000 if later else None


async def wait_paint(watch: PaintWatch, t0: float, limit_s: float = 120.0) -> float | None:
    end = time.perf_counter() + limit_s
    while time.perf_counter() < end:
        first = watch.first_after(t0)
        if first is not None:
            return first
        await asyncio.sleep(0.002)
    return None


async def settle(done: Callable[[], bool], limit_s: float = 60.0) -> None:
    """Poll until ``done()`` (the tests' one poll helper); a bench that times out reports what it saw."""
    import polling

    with contextlib.suppress(AssertionError):
        await polling.until(done, within=limit_s, interval=0.005, message="bench condition")


def show_chat(window: Any) -> bool:
    """Main before #17 left the welcome page up after opening a chat; show the chat so it is measured."""
    if window.stack.currentWidget() is window.chat:
        return False
    window.stack.setCurrentWidget(window.chat)
    return True


def fmt_ms(value: float | None) -> str:
    return "never" if value is None else f"{value:.0f} ms"
