"""The main window's keyboard and navigation: the handlers of the window-wide shortcuts (``shortcuts.py``
declares the keys and calls ``shortcut_<name>``), Up in an empty composer to edit the last message, and a
call opened from the Calls tab.

:class:`WindowKeys` is the base class of :class:`~weclaw_desktop.ui.main_window.MainWindow`, which builds
the parts named below (it does not import the window: the window imports it).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSignalBlocker, Qt
from PySide6.QtGui import QAction, QKeyEvent, QTextCursor
from PySide6.QtWidgets import QMainWindow, QStackedWidget

from weclaw_desktop.ui import shortcuts
from weclaw_desktop.ui.chat_controller import ChatController
from weclaw_desktop.ui.chat_view import ChatView
from weclaw_desktop.ui.composer import Composer
from weclaw_desktop.ui.find_bar import FindBar
from weclaw_desktop.ui.sessions_sidebar import SessionsSidebar


class WindowKeys(QMainWindow):
    """What the keys do in the main window."""

    # built by MainWindow.__init__
    controller: ChatController
    chat: ChatView
    composer: Composer
    find_bar: FindBar
    sidebar: SessionsSidebar
    sidebar_action: QAction
    tools_action: QAction
    stack: QStackedWidget
    shortcuts_dialog: shortcuts.ShortcutsDialog

    def open_settings(self) -> object:
        """The window's Settings dialog (MainWindow)."""
        raise NotImplementedError

    def quit_app(self) -> None:
        """Quit (MainWindow)."""
        raise NotImplementedError

    def shortcut_new_chat(self) -> None:
        self.controller.spawn(self.controller.new_session())

    def shortcut_find(self) -> None:
        self.stack.setCurrentWidget(self.chat) if self.chat.has_content else None
        self.find_bar.open_bar()

    def shortcut_find_next(self) -> None:
        if not self.find_bar.isVisible():
            self.find_bar.open_bar()
        else:
            self.find_bar.find_next()

    def shortcut_find_previous(self) -> None:
        if not self.find_bar.isVisible():
            self.find_bar.open_bar()
        else:
            self.find_bar.find_previous()

    def shortcut_jump(self) -> None:
        """Ctrl+K: type to find a chat, Enter opens the first one listed, Down goes into the list."""
        if not self.sidebar.isVisible():
            self.sidebar_action.setChecked(True)
        self.sidebar.search.setFocus()
        self.sidebar.search.selectAll()

    def shortcut_stop(self) -> None:
        """Esc: close the find bar if it is open, else stop the answer being written."""
        if self.find_bar.isVisible():
            self.find_bar.close_bar()
        elif self.controller.handle is not None and self.controller.handle.running:
            self.controller.stop()

    def shortcut_settings(self) -> None:
        self.open_settings()

    def _set_sidebar(self, shown: bool) -> None:
        self.sidebar.setVisible(shown)
        blocker = QSignalBlocker(self.sidebar_action)
        self.sidebar_action.setChecked(shown)
        del blocker

    def shortcut_toggle_sidebar(self) -> None:
        self.sidebar_action.toggle()

    def shortcut_toggle_tools(self) -> None:
        self.tools_action.trigger()

    def shortcut_shortcuts(self) -> None:
        dialog = shortcuts.ShortcutsDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.shortcuts_dialog = dialog
        dialog.open()

    def shortcut_quit(self) -> None:
        self.quit_app()

    def edit_last_message(self, item: object) -> None:
        """Up in an empty composer: the last message goes back into the composer to be edited and sent again.
        The conversation feature (#16) replaces this with edit-and-resend as a branch (connect
        ``chat.edit_last_requested`` and disconnect this)."""
        text = getattr(item, "text", "")
        if text and not self.composer.edit.toPlainText():
            self.composer.edit.setPlainText(text)
            self.composer.edit.moveCursor(QTextCursor.MoveOperation.End)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            watched is self.composer.edit
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() == Qt.Key.Key_Up
            and not event.modifiers()
            and not self.composer.edit.toPlainText()
        ):
            last = self.chat.last_user_item()
            if last is not None:
                self.chat.edit_last_requested.emit(last)
                return True
        return super().eventFilter(watched, event)

    def show_call(self, session_id: str, call_id: str) -> None:
        """A call double-clicked in the Calls tab: its card, in its chat."""

        async def go() -> None:
            if session_id and session_id != self.controller.session_id:
                await self.controller.open_session(session_id)
            item = self.chat.calls.get(call_id)
            if item is not None:
                self.stack.setCurrentWidget(self.chat)
                self.chat.scroll_to(item)
                card = self.chat.widget_for(item)
                if card is not None:
                    card.setFocus()

        self.controller.spawn(go())
