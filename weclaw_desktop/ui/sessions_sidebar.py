"""The chats sidebar: search box, New chat, the list; rename in place (F2), delete after a confirmation
(Delete), and paging: the list shows a page of chats and asks for the next one (``more_requested``)
when it is scrolled to its end, so every chat can be reached.

It only shows and asks: the window does the storage work and calls :meth:`set_sessions` /
:meth:`add_sessions`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QEvent, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from weclaw_desktop.i18n import Text, tr
from weclaw_desktop.ui import icons
from weclaw_desktop.ui.translation import MessageBox, mark_content

ID_ROLE = Qt.ItemDataRole.UserRole + 1
UNTITLED_ROLE = Qt.ItemDataRole.UserRole + 2  # the title shown is the UI's "New chat", not the user's


def _when(ts: float) -> str:
    if not ts:
        return ""
    now = time.time()
    if now - ts < 86400 and time.localtime(ts).tm_mday == time.localtime(now).tm_mday:
        return time.strftime("%H:%M", time.localtime(ts))
    return time.strftime("%m-%d", time.localtime(ts))


class SessionsSidebar(QWidget):
    new_requested = Signal()
    selected = Signal(str)
    rename_requested = Signal(str, str)
    delete_requested = Signal(str)
    export_requested = Signal(str)  # a chat to save as Markdown / HTML / JSON
    import_requested = Signal()  # add a chat from a JSON export
    search_changed = Signal(str)
    more_requested = Signal()  # the list was scrolled to its end and there are more chats

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Sidebar")
        self._current = ""
        self._filling = False
        self._searching = False
        self._more = False
        self._asked_more = False
        self._open_when_listed = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 6, 10)
        layout.setSpacing(8)
        self.new_button = QPushButton()
        icons.bind(self.new_button, "new_chat")
        self.new_button.clicked.connect(self.new_requested)
        layout.addWidget(self.new_button)
        self.search = QLineEdit()
        self.search.setClearButtonEnabled(True)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(200)
        self._debounce.timeout.connect(self._emit_search)
        self.search.textChanged.connect(self._search_edited)
        self.search.returnPressed.connect(self.open_first)  # Ctrl+K, type, Enter: that chat
        layout.addWidget(self.search)
        self.list = QListWidget()
        mark_content(self.list)  # the chats' titles
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._menu)
        self.list.currentItemChanged.connect(self._current_changed)
        self.list.itemChanged.connect(self._item_renamed)
        self.list.setEditTriggers(QListWidget.EditTrigger.EditKeyPressed)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setWordWrap(False)
        self.list.verticalScrollBar().valueChanged.connect(self._list_scrolled)
        self.list.installEventFilter(self)
        self.search.installEventFilter(self)  # Down goes to the list
        layout.addWidget(self.list, 1)
        self.empty = QLabel()
        self.empty.setObjectName("Muted")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(self.empty)
        self.setMinimumWidth(200)
        self.retranslate()

    def retranslate(self) -> None:
        self.new_button.setText(tr("sessions.new"))
        self.search.setPlaceholderText(tr("sessions.search"))
        self.empty.setText(tr("sessions.no_match") if self._searching else tr("sessions.empty"))
        self._filling = True  # not a rename by the user
        try:
            for i in range(self.list.count()):
                item = self.list.item(i)
                if item.data(UNTITLED_ROLE):
                    item.setText(tr("sessions.untitled"))
        finally:
            self._filling = False

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def _search_edited(self, _text: str) -> None:
        self._debounce.start()

    def _emit_search(self) -> None:
        self.search_changed.emit(self.search.text().strip())

    # --- content --------------------------------------------------------------------------------
    def set_sessions(
        self, sessions: Sequence[Any], current: str = "", *, searching: bool = False, more: bool = False
    ) -> None:
        """``sessions``: objects with ``id``, ``title``, ``updated_at`` (history.SessionInfo); ``more``: there
        are older chats (asked for with ``more_requested`` when the list is scrolled to its end)."""
        bar = self.list.verticalScrollBar()
        keep = bar.value()
        self._filling = True
        try:
            self.list.clear()
            self._add(sessions, current)
        finally:
            self._filling = False
        bar.setValue(keep)
        self._more, self._asked_more = more and not searching, False
        self._searching = searching
        if self._open_when_listed:
            self._open_when_listed = False
            if self.list.count():
                self.list.setCurrentRow(0)
                self.list.setFocus()
        self.empty.setText(tr("sessions.no_match") if searching else tr("sessions.empty"))
        self.empty.setVisible(self.list.count() == 0)

    def add_sessions(self, sessions: Sequence[Any], *, more: bool = False) -> None:
        """Append the next page of chats."""
        known = set(self.ids())
        self._filling = True
        try:
            self._add([s for s in sessions if s.id not in known], "")
        finally:
            self._filling = False
        self._more, self._asked_more = more, False
        self._list_scrolled(self.list.verticalScrollBar().value())

    def _add(self, sessions: Sequence[Any], current: str) -> None:
        for info in sessions:
            title = info.title or tr("sessions.untitled")
            item = QListWidgetItem(title)
            item.setData(ID_ROLE, info.id)
            item.setData(UNTITLED_ROLE, not info.title)
            item.setToolTip(f"{title}\n{_when(getattr(info, 'updated_at', 0.0))}")
            snippet = getattr(info, "snippet", "")
            if snippet:
                item.setToolTip(snippet)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
            self.list.addItem(item)
            if info.id == (current or self._current):
                self.list.setCurrentItem(item)

    def count(self) -> int:
        return self.list.count()

    def _list_scrolled(self, value: int) -> None:
        bar = self.list.verticalScrollBar()
        if self._more and not self._asked_more and value >= bar.maximum() - 2 * max(1, bar.singleStep()):
            self._asked_more = True
            self.more_requested.emit()

    def open_first(self) -> None:
        """Open the first chat listed (after a search: the best match)."""
        if self._debounce.isActive():  # the list is not filtered yet: filter now, open when it arrives
            self._debounce.stop()
            self._emit_search()
            self._open_when_listed = True
            return
        if self.list.count():
            self.list.setCurrentRow(0)
            self.list.setFocus()

    def eventFilter(self, watched: Any, event: QEvent) -> bool:
        """F2 renames and Delete deletes the selected chat (asking first); Down in the search box goes to the list."""
        if watched is self.search and event.type() == QEvent.Type.KeyPress and event.key() == Qt.Key.Key_Down:  # type: ignore[attr-defined]
            self.list.setFocus()
            if self.list.currentRow() < 0 and self.list.count():
                self.list.setCurrentRow(0)
            return True
        if (
            watched is self.list
            and event.type() == QEvent.Type.KeyPress
            and self.list.state() != self.list.State.EditingState
        ):
            key = event.key()  # type: ignore[attr-defined]
            item = self.list.currentItem()
            if item is not None and key == Qt.Key.Key_F2:
                self.list.editItem(item)
                return True
            if item is not None and key in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace) and not event.modifiers():  # type: ignore[attr-defined]
                self.confirm_delete(str(item.data(ID_ROLE)), item.text())
                return True
        return super().eventFilter(watched, event)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._list_scrolled(self.list.verticalScrollBar().value())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._list_scrolled(self.list.verticalScrollBar().value())

    def set_current(self, session_id: str) -> None:
        self._current = session_id
        self._filling = True
        try:
            for i in range(self.list.count()):
                item = self.list.item(i)
                if item.data(ID_ROLE) == session_id:
                    self.list.setCurrentItem(item)
                    break
        finally:
            self._filling = False

    def ids(self) -> list[str]:
        return [str(self.list.item(i).data(ID_ROLE)) for i in range(self.list.count())]

    def titles(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    # --- interaction ----------------------------------------------------------------------------
    def _current_changed(self, item: QListWidgetItem | None, _previous: QListWidgetItem | None) -> None:
        if self._filling or item is None:
            return
        session_id = str(item.data(ID_ROLE))
        if session_id != self._current:
            self._current = session_id
            self.selected.emit(session_id)

    def _item_renamed(self, item: QListWidgetItem) -> None:
        if self._filling:
            return
        title = item.text().strip()
        if title:
            self.rename_requested.emit(str(item.data(ID_ROLE)), title)

    def _menu(self, pos: QPoint) -> None:
        item = self.list.itemAt(pos)
        if item is None:
            return
        menu = QMenu(self)
        rename = menu.addAction(icons.icon("edit"), tr("sessions.rename"))
        delete = menu.addAction(icons.icon("trash"), tr("sessions.delete"))
        menu.addSeparator()
        export = menu.addAction(icons.icon("document"), tr("sessions.export"))
        import_ = menu.addAction(icons.icon("open"), tr("sessions.import"))
        rename.triggered.connect(lambda: self.list.editItem(item))
        delete.triggered.connect(lambda: self.confirm_delete(str(item.data(ID_ROLE)), item.text()))
        export.triggered.connect(lambda: self.export_requested.emit(str(item.data(ID_ROLE))))
        import_.triggered.connect(self.import_requested.emit)
        menu.popup(self.list.viewport().mapToGlobal(pos))

    def confirm_delete(self, session_id: str, title: str) -> QMessageBox:
        box = MessageBox(
            QMessageBox.Icon.Question, Text("sessions.delete"), Text("sessions.delete_confirm", title=title), self
        )
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.setDefaultButton(QMessageBox.StandardButton.No)

        def clicked(button: Any) -> None:
            if box.standardButton(button) == QMessageBox.StandardButton.Yes:
                self.delete_requested.emit(session_id)

        box.buttonClicked.connect(clicked)
        box.open()
        return box
