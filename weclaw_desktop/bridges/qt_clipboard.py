"""Clipboard bridge on ``QClipboard`` (runs on the Qt thread, like every bridge)."""

from __future__ import annotations

from PySide6.QtGui import QClipboard, QGuiApplication


class QtClipboard:
    def __init__(self, clipboard: QClipboard | None = None) -> None:
        self._clipboard = clipboard or QGuiApplication.clipboard()

    async def read_text(self) -> str:
        return self._clipboard.text(QClipboard.Mode.Clipboard)

    async def write_text(self, text: str) -> None:
        self._clipboard.setText(text, QClipboard.Mode.Clipboard)
