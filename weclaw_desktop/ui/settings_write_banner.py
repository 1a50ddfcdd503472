"""The banner above the chat while the settings cannot be written to disk (a full disk, a read-only folder).

The settings store writes behind (off the UI thread), so a save that fails is known only later: the store
reports it (:meth:`SettingsStore.write_behind`), the window hands the report to this banner. It says which
file and why, that the changes are in use until WeClaw quits and the file keeps the previous ones, and
offers Try again (the window flushes the store off the UI thread). It stays until a write works again
(the store reports None), whatever page the chat area shows (the setup panel too).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from weclaw_desktop.i18n import Text, tr


class SettingsWriteBanner(QFrame):
    """Shown while the last settings write failed."""

    def __init__(self, retry: Callable[[], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Notice")
        row = QHBoxLayout(self)
        row.setContentsMargins(12, 8, 8, 8)
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        row.addWidget(self.text, 1)
        self.retry_button = QPushButton()
        self.retry_button.setProperty("flat", True)
        self.retry_button.clicked.connect(retry)
        row.addWidget(self.retry_button)
        self._message: Text | None = None
        self.setVisible(False)
        self.retranslate()

    def report(self, error: OSError | None, path: Path) -> None:
        """A write failed (``error``) or worked again (None)."""
        if error is None:
            self._message = None
            self.setVisible(False)
            return
        self._message = Text("settings.write_failed", path=str(path), message=error.strerror or str(error))
        self.retranslate()
        self.setVisible(True)

    @property
    def message(self) -> str:
        return str(self._message) if self._message is not None else ""

    def retranslate(self) -> None:
        self.text.setText(self.message)
        self.retry_button.setText(tr("settings.write_retry"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)
