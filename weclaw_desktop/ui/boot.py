"""Starting the Qt front end: the application object, language and theme, the main window.

    app = qt_application(argv)          # the QApplication (reused if one exists), named for the OS
    prepare_ui(app, settings)           # UI language (+ Qt's own translations) and theme from the settings
    window = build_window(store)        # store -> registry -> MainWindow -> inject its Qt bridges

The composition root (:mod:`weclaw_desktop.app`) and the self-test (:mod:`weclaw_desktop.ui.selftest`) both
start the UI through these, so ``ui/`` never imports the composition root.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtWidgets import QApplication

from weclaw_desktop import i18n
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import Settings, SettingsStore
from weclaw_desktop.toolkit.registry import ToolRegistry
from weclaw_desktop.ui import theme
from weclaw_desktop.ui.main_window import MainWindow
from weclaw_desktop.ui.translation import install_translations, resolve

#: How long a worker thread (a tool's blocking work in asyncio.to_thread) may hold the GIL before the UI
#: thread gets it back. Python's default (5 ms) lets a CPU-bound tool add up to 5 ms to every Qt
#: callback; 1 ms keeps the window responsive at a small cost in thread switching.
UI_SWITCH_INTERVAL_S = 0.001


def qt_application(argv: Sequence[str] | None = None) -> QApplication:
    sys.setswitchinterval(UI_SWITCH_INTERVAL_S)
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication(list(argv) if argv is not None else sys.argv[:1])
    app.setApplicationName("WeClaw")
    app.setApplicationDisplayName("WeClaw")
    app.setOrganizationName("WeClaw")
    app.setDesktopFileName("weclaw-desktop")
    return app


def prepare_ui(app: QApplication, settings: Settings) -> None:
    """Language (with Qt's own translations) and theme from the settings; both follow the system by default."""
    i18n.set_language(resolve(settings.ui.language))
    install_translations(app)
    theme.apply_theme(app, settings.ui.theme)


def follow_system_theme(app: QApplication, window: MainWindow) -> None:
    """With theme "system", switch between light and dark when the system does."""

    def changed(*_args: object) -> None:
        if window.settings.ui.theme == "system":
            theme.apply_theme(app, "system")

    hints = app.styleHints()
    signal = getattr(hints, "colorSchemeChanged", None)
    if signal is not None:
        signal.connect(changed)


def build_window(
    settings: SettingsStore | Settings,
    *,
    secrets: SecretStore | None = None,
    tools_json: str | Path | None = None,
    registry: ToolRegistry | None = None,
) -> MainWindow:
    """store -> registry -> window -> inject the window's bridges. Does not show the window.

    A bare Settings gets a store of its own (on the data folder) that starts from it."""
    store = settings if isinstance(settings, SettingsStore) else SettingsStore(settings=settings)
    config = store.settings.tools.config
    registry = registry or ToolRegistry.from_path(tools_json, config_overrides=config)
    window = MainWindow(store, registry, secrets or SecretStore())
    registry.inject(window.bridges)
    return window
