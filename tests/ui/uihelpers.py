"""Helpers the GUI tests import (conftest fixtures cannot be imported)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import polling
from fakeopenai import FakeOpenAI
from helpers import tool_entry

from weclaw_desktop.settings import Settings

TEST_KEY = "sk-ui-test-0c1d2e3f4a5b"

#: The qasync loops of finished tests, kept alive: when the garbage collector destroyed one (and the Qt
#: timer objects it owns) while a later test's Qt loop was dispatching timers, offscreen Qt crashed.
KEPT_LOOPS: list[asyncio.AbstractEventLoop] = []


def keep_loop() -> None:
    loop = asyncio.get_running_loop()
    if loop not in KEPT_LOOPS:
        KEPT_LOOPS.append(loop)


async def close_windows(windows: list[Any]) -> None:
    """Quit and delete test windows, then process the deferred deletes on this test's own loop.

    Left for the next test's loop, Qt events for the deleted windows' platform windows were delivered
    after them (a rare offscreen crash).
    """
    for window in windows:
        window.quit_app()
        await window.controller.shutdown()
        await asyncio.to_thread(window.store.flush)  # as the app does at quit: the last saves reach the file
        window.deleteLater()
    await asyncio.sleep(0.05)


def configured_settings(fake: FakeOpenAI) -> Settings:
    s = Settings()
    s.provider.base_url = fake.base_url
    s.provider.model = "fake-model"
    s.provider.preset = "custom"
    s.provider.max_retries = 0
    s.provider.timeout_s = 20
    s.agent.exposure = "all"
    s.agent.model_titles = False  # scripted fakes: no side request for a title unless a test asks for it
    return s


async def until(predicate: Callable[[], Any], limit_s: float = 5.0, what: str = "condition") -> None:
    """Poll on the qasync loop (never qtbot.wait* in async tests: it nests a Qt loop and hangs)."""
    keep_loop()
    await polling.until(predicate, within=limit_s, interval=0.01, message=f"timed out waiting for {what}")


def ui_manifest() -> dict[str, Any]:
    work = tool_entry("WorkTool", ["run", "report"], timeout_s=60)
    work["module"] = "weclaw_ui_test_tools"
    work["display"] = {"name": {"en": "Worker", "zh": "工作者"}, "icon": "chip", "category": "system"}
    echo = tool_entry("EchoTool", ["say", "shout"], config={"prefix": ""})
    echo["display"] = {"name": {"en": "Echo", "zh": "回声"}, "icon": "terminal", "category": "productivity"}
    bridged = tool_entry("BridgedTool", ["paste"], bridges=["clipboard"])
    bridged["display"] = {"name": {"en": "Paste", "zh": "粘贴"}, "icon": "clipboard", "category": "desktop"}
    return {
        "version": 1,
        "tools": {"echo": echo, "work": work, "bridged": bridged},
        "profiles": {"full": ["*"]},
    }
