"""Find in chat (Ctrl+F): a bar above the chat; every match highlighted, Enter / F3 for the next, Shift+Enter /
Shift+F3 for the previous, Esc closes.

It searches the chat's *items* (``ChatItem.search_text``), so it finds text in messages that have no widget
now (the chat makes widgets only near the screen); going to a match scrolls its item on screen, and a
message decorator highlights matches in every message widget made while the bar is open.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from weclaw_desktop.i18n import tr
from weclaw_desktop.ui.chat.items import ChatItem, MessageItem
from weclaw_desktop.ui.chat.message_widget import MessageWidget
from weclaw_desktop.ui.chat_view import ChatView


@dataclass(frozen=True)
class Match:
    item: ChatItem
    index: int  # the n-th occurrence inside the item


def find_matches(items: list[ChatItem], needle: str) -> list[Match]:
    needle = needle.strip().lower()
    if not needle:
        return []
    out: list[Match] = []
    for item in items:
        text = item.search_text().lower()
        start, n = text.find(needle), 0
        while start >= 0:
            out.append(Match(item, n))
            n += 1
            start = text.find(needle, start + len(needle))
    return out


class FindBar(QFrame):
    closed = Signal()

    def __init__(self, chat: ChatView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("FindBar")
        self.chat = chat
        self.matches: list[Match] = []
        self.current = -1
        row = QHBoxLayout(self)
        row.setContentsMargins(24, 4, 24, 4)
        row.setSpacing(6)
        self.edit = QLineEdit()
        self.edit.setClearButtonEnabled(True)
        self.edit.installEventFilter(self)
        row.addWidget(self.edit, 1)
        self.count = QLabel()
        self.count.setObjectName("Muted")
        row.addWidget(self.count)
        self.previous = QToolButton()
        self.previous.setArrowType(Qt.ArrowType.UpArrow)
        self.previous.clicked.connect(self.find_previous)
        row.addWidget(self.previous)
        self.next = QToolButton()
        self.next.setArrowType(Qt.ArrowType.DownArrow)
        self.next.clicked.connect(self.find_next)
        row.addWidget(self.next)
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.clicked.connect(self.close_bar)
        row.addWidget(self.close_button)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(150)
        self._debounce.timeout.connect(self.search)
        self.edit.textChanged.connect(lambda _t: self._debounce.start())
        self._undecorate = chat.add_message_decorator(self._decorate)
        self.setVisible(False)
        self.retranslate()

    def retranslate(self) -> None:
        self.edit.setPlaceholderText(tr("find.placeholder"))
        self.previous.setToolTip(tr("find.previous"))
        self.next.setToolTip(tr("find.next"))
        self.close_button.setToolTip(tr("find.close"))
        self._show_count()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    # --- opening and closing --------------------------------------------------------------------
    def open_bar(self) -> None:
        self.setVisible(True)
        self.edit.setFocus()
        self.edit.selectAll()
        if self.edit.text():
            self.search()

    def close_bar(self) -> None:
        self.setVisible(False)
        self.matches, self.current = [], -1
        self._highlight_live()
        self.closed.emit()

    @property
    def needle(self) -> str:
        return self.edit.text().strip() if self.isVisible() else ""

    # --- searching ------------------------------------------------------------------------------
    def search(self) -> None:
        self._debounce.stop()
        self.matches = find_matches(self.chat.items, self.edit.text())
        self.current = len(self.matches) - 1 if self.matches else -1  # start at the newest, like a chat reads
        self._go()

    def find_next(self) -> None:
        if self._debounce.isActive():
            self.search()  # the text just changed: show its newest match first
            return
        if self.matches:
            self.current = (self.current + 1) % len(self.matches)
            self._go()

    def find_previous(self) -> None:
        if self._debounce.isActive():
            self.search()
            return
        if self.matches:
            self.current = (self.current - 1) % len(self.matches)
            self._go()

    def _go(self) -> None:
        self._show_count()
        if 0 <= self.current < len(self.matches):
            match = self.matches[self.current]
            widget = self.chat.widget_for(match.item)
            y = 0
            if isinstance(widget, MessageWidget):
                for view in widget.body.views:
                    found = view.match_y(self.needle, match.index)
                    if found is not None:
                        y = view.mapTo(widget, view.rect().topLeft()).y() + found
                        break
            self.chat.scroll_to(match.item, y, margin=80)
        self._highlight_live()

    def _current_in(self, item: ChatItem) -> int:
        if 0 <= self.current < len(self.matches) and self.matches[self.current].item is item:
            return self.matches[self.current].index
        return -1

    def _highlight_live(self) -> None:
        for _item, widget in self.chat.live_widgets():
            if isinstance(widget, MessageWidget):
                self._decorate(widget)

    def _decorate(self, widget: MessageWidget) -> None:
        needle = self.needle if self.matches else ""
        current = self._current_in(widget.item) if isinstance(widget.item, MessageItem) else -1
        offset = 0
        for view in widget.body.views:
            shown = view.highlight(needle, current - offset if current >= offset else -1)
            offset += shown

    def _show_count(self) -> None:
        if not self.edit.text().strip():
            self.count.setText("")
        elif not self.matches:
            self.count.setText(tr("find.none"))
        else:
            self.count.setText(tr("find.count", i=self.current + 1, n=len(self.matches)))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.edit and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                    self.find_previous()
                else:
                    self.find_next()
                return True
            if event.key() == Qt.Key.Key_Escape:
                self.close_bar()
                return True
        return super().eventFilter(watched, event)
