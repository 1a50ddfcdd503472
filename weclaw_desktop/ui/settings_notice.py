"""The banner above the chat that says which settings could not be read and what is used instead.

It follows the :class:`SettingsStore`: shown while the store has problems that need the user (field
errors, an unreadable file, unusable MCP entries), with what became stricter, where the copy of the file
is, and three ways out: use the values in use (the store writes them), reload the file after fixing it
by hand, or show the file. Hiding it (×) lasts until the problems change.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from weclaw_desktop.i18n import tr
from weclaw_desktop.settings import ProblemKind, SettingsChange, SettingsProblem, SettingsStore

MAX_LINES = 5
BODY_MAX_HEIGHT = 150  # px: longer lists scroll, so the chat keeps most of the window


class SettingsNotice(QWidget):
    def __init__(self, store: SettingsStore, reveal: Callable[[Path], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self._reveal = reveal
        self._hidden_for: tuple[SettingsProblem, ...] | None = None
        outer = QVBoxLayout(self)
        outer.setContentsMargins(24, 12, 24, 0)
        self.frame = QFrame()
        self.frame.setObjectName("Notice")
        outer.addWidget(self.frame)
        layout = QVBoxLayout(self.frame)
        layout.setContentsMargins(14, 10, 14, 10)
        layout.setSpacing(4)
        top = QHBoxLayout()
        self.title = QLabel()
        self.title.setObjectName("Section")
        self.title.setWordWrap(True)
        top.addWidget(self.title, 1)
        self.hide_button = QToolButton()
        self.hide_button.setText("×")
        self.hide_button.setAutoRaise(True)
        self.hide_button.clicked.connect(self.dismiss)
        top.addWidget(self.hide_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(top)
        self.body = QLabel()
        self.body.setWordWrap(True)
        self.body.setTextFormat(Qt.TextFormat.PlainText)
        self.body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.body_area = QScrollArea()
        self.body_area.setWidgetResizable(True)
        self.body_area.setFrameShape(QFrame.Shape.NoFrame)
        self.body_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.body_area.setMaximumHeight(BODY_MAX_HEIGHT)
        self.body_area.setWidget(self.body)
        self.body_area.viewport().setAutoFillBackground(False)
        self.body.setAutoFillBackground(False)
        layout.addWidget(self.body_area)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.accept_button = QPushButton()
        self.accept_button.clicked.connect(self.accept)
        self.reload_button = QPushButton()
        self.reload_button.clicked.connect(self.reload)
        self.show_button = QPushButton()
        self.show_button.clicked.connect(self._show_file)
        for button in (self.accept_button, self.reload_button, self.show_button):
            buttons.addWidget(button)
        layout.addLayout(buttons)
        self.retranslate()
        self.refresh()

    def retranslate(self) -> None:
        self.hide_button.setToolTip(tr("settings.problems.dismiss"))
        self.accept_button.setText(tr("settings.problems.accept"))
        self.accept_button.setToolTip(tr("settings.problems.accept.tip"))
        self.reload_button.setText(tr("settings.problems.reload"))
        self.reload_button.setToolTip(tr("settings.problems.reload.tip"))
        self.show_button.setText(tr("settings.problems.open"))
        self.title.setText(tr("settings.problems.title"))
        self.body.setText(self.text(self.store.errors))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    # --- the store --------------------------------------------------------------------------------
    def changed(self, _change: SettingsChange | None = None) -> None:
        self.refresh()

    def refresh(self) -> None:
        errors = self.store.errors
        if not errors or errors == self._hidden_for:
            self.setVisible(False)
            return
        self._hidden_for = None
        self.title.setText(tr("settings.problems.title"))
        self.body.setText(self.text(errors))
        fixable = any(p.kind is not ProblemKind.MCP_ENTRY for p in errors)
        self.accept_button.setVisible(fixable)
        self.setVisible(True)

    def text(self, errors: tuple[SettingsProblem, ...]) -> str:
        """What became stricter first (what the user notices), then each problem, then where the copy is."""
        effects = dict.fromkeys(e for p in errors for e in p.effects)
        lines = [tr(f"settings.effect.{e}") for e in effects]
        for problem in errors[:MAX_LINES]:
            if problem.kind is ProblemKind.UNREADABLE:
                lines.append(tr("settings.problems.unreadable", message=problem.message))
            elif problem.kind is ProblemKind.MCP_ENTRY:
                lines.append(tr("settings.problems.mcp", path=problem.path, message=problem.message))
            else:
                lines.append(f"• {problem.path}: {problem.message}")
        if len(errors) > MAX_LINES:
            lines.append(tr("settings.problems.more", n=len(errors) - MAX_LINES))
        copy = self.store.broken_copy
        if copy is not None:
            lines.append(tr("settings.problems.copy", path=str(copy)))
        return "\n".join(lines)

    # --- actions ----------------------------------------------------------------------------------
    def accept(self) -> None:
        try:
            self.store.accept_fallbacks()
        except OSError as exc:
            self.body.setText(tr("settings.invalid", message=exc.strerror or str(exc)))
            return
        self.refresh()

    def reload(self) -> None:
        self.store.reload()
        self.refresh()

    def dismiss(self) -> None:
        self._hidden_for = self.store.errors
        self.setVisible(False)

    def _show_file(self) -> None:
        copy = self.store.broken_copy
        self._reveal(copy if copy is not None and copy.exists() else self.store.path)
