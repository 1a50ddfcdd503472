"""GUI test fixtures: the fake OpenAI server, a tools.json of test tools, and a real MainWindow with a
real AgentRuntime (offscreen Qt, qasync loop)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
for _p in (HERE.parent, HERE):  # tests/ (fakeopenai, sample_tools, helpers) and tests/ui
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from uihelpers import TEST_KEY, close_windows, keep_loop, ui_manifest  # noqa: E402

from weclaw_desktop.settings import Settings  # noqa: E402


@pytest.fixture
def tools_json(tmp_path: Path) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(ui_manifest()), encoding="utf-8")
    return path


WindowFactory = Callable[..., Awaitable[Any]]


@pytest.fixture
async def make_window(qtbot: Any, tools_json: Path) -> AsyncIterator[WindowFactory]:
    """Build the real window (registry from the test tools.json, bridges injected) with a runtime."""
    from weclaw_desktop.app import create_runtime
    from weclaw_desktop.i18n import set_language
    from weclaw_desktop.ui.boot import build_window
    from weclaw_desktop.ui.theme import apply_theme

    made: list[Any] = []
    keep_loop()

    async def factory(
        settings: Settings, *, runtime: bool = True, language: str = "en", api_key: str | None = TEST_KEY
    ) -> Any:
        from PySide6.QtWidgets import QApplication

        set_language(language)
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        app.setQuitOnLastWindowClosed(False)  # as the app does: quitting is explicit, not "last window"
        apply_theme(app, "light")
        window = build_window(settings, tools_json=tools_json)
        made.append(window)  # deleted by this fixture, inside the test's own loop (see below)
        if runtime:
            create_runtime(window, api_key=api_key, logs=False)
            await window.controller.idle()
        window.show()
        return window

    yield factory
    await close_windows(made)
