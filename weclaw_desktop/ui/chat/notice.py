"""A one-line notice in the chat (an error, "Stopped.", a file from the phone), made from a :class:`NoticeItem`.

A feature can give a notice one action (``item.data["action"] = (label, handler)``, e.g. Retry after an error):
it is shown as a link after the message and calls ``handler()`` when clicked."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

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
        self.setObjectName("ChatNotice")
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.linkActivated.connect(lambda _href: self.trigger_action())
        self._show()
        self.restyle()

    def _action(self) -> tuple[Any, Callable[[], None]] | None:
        action = self.item.data.get("action")
        return action if isinstance(action, tuple) and len(action) == 2 and callable(action[1]) else None

    def action_link(self) -> str:
        """The action's label ('' when the notice has none)."""
        action = self._action()
        return str(action[0]) if action is not None else ""

    def trigger_action(self) -> None:
        action = self._action()
        if action is not None:
            action[1]()

    def _show(self) -> None:
        label = self.action_link()
        if not label:
            self.setTextFormat(Qt.TextFormat.PlainText)
            self.setText(str(self.message))
            return
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.setText(f'{html.escape(str(self.message))} &nbsp;<a href="action">{html.escape(label)}</a>')

    def restyle(self) -> None:
        c = theme.colors()
        color = {"error": c.danger, "warning": c.warning}.get(self.kind, c.muted)
        theme.tint(self, color)  # its padding is a rule of the theme's style sheet (QLabel#ChatNotice)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange and isinstance(self.message, Text):
            self._show()
        super().changeEvent(event)
