"""Notifier bridge on ``QSystemTrayIcon``: balloon messages, and the tray menu (show / hide / quit).

Where the system has no tray (some Linux desktops, offscreen tests) notifications still "succeed" by
flashing the window in the task bar, and :attr:`QtNotifier.available` says so.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QApplication, QMenu, QSystemTrayIcon, QWidget


class QtNotifier:
    def __init__(
        self,
        window: QWidget,
        icon: QIcon,
        *,
        on_quit: Callable[[], None],
        labels: Callable[[str], str] = lambda key: key,
    ) -> None:
        self._window = window
        self._labels = labels
        self.tray = QSystemTrayIcon(icon, window)
        self.tray.setToolTip("WeClaw")
        self.menu = QMenu(window)
        self.toggle_action = QAction(self.menu)
        self.toggle_action.triggered.connect(self.toggle_window)
        self.quit_action = QAction(self.menu)
        self.quit_action.triggered.connect(on_quit)
        self.menu.addAction(self.toggle_action)
        self.menu.addSeparator()
        self.menu.addAction(self.quit_action)
        self.menu.aboutToShow.connect(self.retranslate)
        self.tray.setContextMenu(self.menu)
        self.tray.activated.connect(self._activated)
        self.retranslate()
        self.sent: list[tuple[str, str]] = []  # what was shown (the log and tests read it)
        if self.available:
            self.tray.show()

    @property
    def available(self) -> bool:
        return QSystemTrayIcon.isSystemTrayAvailable()

    def retranslate(self) -> None:
        self.toggle_action.setText(self._labels("action.hide" if self._window.isVisible() else "action.show"))
        self.quit_action.setText(self._labels("action.quit"))

    def toggle_window(self) -> None:
        if self._window.isVisible():
            self._window.hide()
        else:
            self.show_window()

    def show_window(self) -> None:
        self._window.show()
        self._window.setWindowState(self._window.windowState() & ~self._window.windowState().WindowMinimized)
        self._window.raise_()
        self._window.activateWindow()

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger, QSystemTrayIcon.ActivationReason.DoubleClick):
            self.toggle_window()

    async def notify(self, title: str, message: str, *, urgent: bool = False) -> None:
        self.sent.append((title, message))
        if self.available and QSystemTrayIcon.supportsMessages():
            kind = QSystemTrayIcon.MessageIcon.Warning if urgent else QSystemTrayIcon.MessageIcon.Information
            self.tray.showMessage(title, message, kind, 8000)
        else:
            QApplication.alert(self._window, 0)

    def close(self) -> None:
        self.tray.hide()
