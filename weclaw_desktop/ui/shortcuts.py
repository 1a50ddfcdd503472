"""The window's keyboard shortcuts, declared once: the actions, their keys on every platform, and the
overview dialog (Ctrl+/) that lists them in the UI language.

``Ctrl`` is Command on macOS (Qt maps it). Keys that are not window actions (Enter in the composer, F2 in
the chat list, ...) are listed too, so the overview shows everything the keyboard can do.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from weclaw_desktop.i18n import tr


@dataclass(frozen=True)
class Shortcut:
    name: str  # the window's handler is "shortcut_<name>"; the text is "shortcut.<name>"
    keys: tuple[str, ...]  # portable QKeySequence strings, the first is shown


#: Window actions (the window has a method ``shortcut_<name>`` for each).
ACTIONS: tuple[Shortcut, ...] = (
    Shortcut("new_chat", ("Ctrl+N",)),
    Shortcut("find", ("Ctrl+F",)),
    Shortcut("find_next", ("F3", "Ctrl+G")),
    Shortcut("find_previous", ("Shift+F3", "Ctrl+Shift+G")),
    Shortcut("jump", ("Ctrl+K",)),
    Shortcut("stop", ("Esc",)),
    Shortcut("settings", ("Ctrl+,",)),  # also the platform's Preferences key (Cmd+, on macOS)
    Shortcut("toggle_sidebar", ("Ctrl+B",)),
    Shortcut("toggle_tools", ("Ctrl+J",)),
    Shortcut("shortcuts", ("Ctrl+/", "F1")),
    Shortcut("quit", ("Ctrl+Q",)),
)
#: Keys handled where they apply (listed in the overview only).
ELSEWHERE: tuple[Shortcut, ...] = (
    Shortcut("send", ("Enter",)),
    Shortcut("new_line", ("Shift+Enter",)),
    Shortcut("edit_last", ("Up",)),
    Shortcut("rename_chat", ("F2",)),
    Shortcut("delete_chat", ("Delete",)),
    Shortcut("open_call", ("Double-click",)),
)


def install(window: QWidget, handler: Callable[[str], Callable[[], None]]) -> dict[str, QAction]:
    """A window-wide QAction per entry of :data:`ACTIONS`, calling ``handler(name)()``."""
    actions: dict[str, QAction] = {}
    for entry in ACTIONS:
        action = QAction(window)
        keys = [QKeySequence(k) for k in entry.keys]
        if entry.name == "settings":
            preferences = QKeySequence(QKeySequence.StandardKey.Preferences)
            if not preferences.isEmpty() and preferences not in keys:
                keys.append(preferences)
        action.setShortcuts(keys)
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.triggered.connect(handler(entry.name))
        window.addAction(action)
        actions[entry.name] = action
    return actions


def key_text(keys: tuple[str, ...]) -> str:
    shown = []
    for key in keys:
        if key == "Double-click":
            shown.append(tr("shortcut.key.double_click"))
        else:
            shown.append(QKeySequence(key).toString(QKeySequence.SequenceFormat.NativeText) or key)
    return " / ".join(shown)


class ShortcutsDialog(QDialog):
    """Every shortcut and what it does (Ctrl+/)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.resize(520, 460)
        layout = QVBoxLayout(self)
        self.intro = QLabel()
        self.intro.setObjectName("Muted")
        layout.addWidget(self.intro)
        self.tree = QTreeWidget()
        self.tree.setColumnCount(2)
        self.tree.setRootIsDecorated(False)
        self.tree.header().setStretchLastSection(True)
        layout.addWidget(self.tree, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.retranslate()

    def retranslate(self) -> None:
        self.setWindowTitle(tr("shortcut.title"))
        self.intro.setText(tr("shortcut.intro"))
        self.tree.setHeaderLabels([tr("shortcut.column.keys"), tr("shortcut.column.does")])
        self.tree.clear()
        for entry in (*ACTIONS, *ELSEWHERE):
            self.tree.addTopLevelItem(QTreeWidgetItem([key_text(entry.keys), tr(f"shortcut.{entry.name}")]))
        self.tree.resizeColumnToContents(0)

    def rows(self) -> list[tuple[str, str]]:
        items = [self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount())]
        return [(item.text(0), item.text(1)) for item in items if item is not None]

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)
