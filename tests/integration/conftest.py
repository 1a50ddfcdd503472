"""Fixtures for the composition tests: the real window (bundled tools.json), the app's services, a phone."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
for _p in (HERE.parent, HERE.parent / "ui", HERE.parent / "companion", HERE.parent / "mcp", HERE):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from fakeopenai import FakeOpenAI  # noqa: E402
from uihelpers import keep_loop  # noqa: E402

from weclaw_desktop.settings import McpServerSettings, Settings  # noqa: E402

MCP_SERVER = HERE.parent / "mcp" / "mcp_test_server.py"


def mcp_settings(name: str = "test") -> McpServerSettings:
    return McpServerSettings(name=name, transport="stdio", command=sys.executable, args=[str(MCP_SERVER)])


def phone_settings(settings: Settings, incoming: Path) -> Settings:
    """The phone link on loopback, any free port, new phones accepted without asking (a test has no user)."""
    settings.companion.enabled = True
    settings.companion.interface = "127.0.0.1"
    settings.companion.port = 0
    settings.companion.auto_accept = True
    settings.companion.incoming_dir = str(incoming)
    return settings


@pytest.fixture
async def fake_openai() -> AsyncIterator[FakeOpenAI]:
    server = FakeOpenAI()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


WindowFactory = Callable[[Settings], Awaitable[Any]]


@pytest.fixture
async def make_window(qtbot: Any, memory_keyring: Any) -> AsyncIterator[WindowFactory]:
    """The real window on the bundled tools.json, bridges injected, shown; quit and deleted afterwards."""
    from PySide6.QtWidgets import QApplication

    from weclaw_desktop.app import build_window
    from weclaw_desktop.ui.i18n import set_language
    from weclaw_desktop.ui.theme import apply_theme

    made: list[Any] = []
    keep_loop()

    async def factory(settings: Settings) -> Any:
        set_language("en")
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        app.setQuitOnLastWindowClosed(False)
        apply_theme(app, "light")
        window = build_window(settings)
        made.append(window)
        window.show()
        return window

    yield factory
    for window in made:
        window.quit_app()
        await window.controller.shutdown()
        window.deleteLater()
    await asyncio.sleep(0.05)
