"""Fixtures for the composition tests: the real window (bundled tools.json), the app's services, a phone."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from integration_helpers import WindowFactory, close_windows, keep_loop  # noqa: E402

from weclaw_desktop.settings import Settings  # noqa: E402


@pytest.fixture
async def make_window(qtbot: Any, memory_keyring: Any) -> AsyncIterator[WindowFactory]:
    """The real window on the bundled tools.json, bridges injected, shown; quit and deleted afterwards."""
    from PySide6.QtWidgets import QApplication

    from weclaw_desktop.i18n import set_language
    from weclaw_desktop.ui.boot import build_window
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
    await close_windows(made)
