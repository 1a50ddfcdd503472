"""A one-line notice in the chat (an error, "Stopped.", a file from the phone), made from a :class:`NoticeItem`."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QLabel, QWidget

from weclaw_desktop.i18n import Text
from weclaw_desktop.ui import theme
from weclaw_desktop.ui.chat.items import NoticeItem


class NoticeWidget(QLabel):
    """Made from a :class:`Text`, it follows a language change; its colour follows the theme."""

    def __init__(self, item: NoticeItem | str | Text, kind: str = "info", parent: QWidget | None = None) -> None:
        if not isinstance(item, NoticeItem):
            item = NoticeItem(message=item, kind=kind)
        super().__init__(str(item.message), parent)
        self.item = item
        self.message = item.message
        self.kind = item.kind
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.restyle()

    def restyle(self) -> None:
        c = theme.colors()
        color = {"error": c.danger, "warning": c.warning}.get(self.kind, c.muted)
        self.setStyleSheet(f"color:{color}; padding: 4px 12px;")

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange and isinstance(self.message, Text):
            self.setText(str(self.message))
        super().changeEvent(event)
