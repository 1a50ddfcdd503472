"""The "Thinking" block of a reasoning model's answer: above the answer, collapsible, copyable.

While the model thinks the block is open and its text streams in, with the time so far ("Thinking… 12 s"); when
the answer (or a tool call) starts it collapses to one line ("Thought for 12 s") that opens again on a click. A
block restored from history shows the stored text and duration. Its text is the model's own words (marked as
content, not UI text); the header follows the UI language.

The chat view owns placement: :meth:`ThinkingBlock.append` while streaming, :meth:`finish` when the answer starts,
:meth:`stop` when the turn ends without one. Deltas are batched (one re-layout at most every
:data:`FLUSH_INTERVAL_MS`), so a fast stream of reasoning tokens never re-renders per token.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QGuiApplication, QResizeEvent, QTextCursor
from PySide6.QtWidgets import QFrame, QHBoxLayout, QSizePolicy, QTextEdit, QToolButton, QVBoxLayout, QWidget

from weclaw_desktop.i18n import tr
from weclaw_desktop.ui import icons, theme
from weclaw_desktop.ui.translation import mark_content

FLUSH_INTERVAL_MS = 80
TICK_MS = 250
#: The open block grows with its text up to this height, then scrolls (thinking can run to pages).
MAX_BODY_HEIGHT = 280


class _Body(QTextEdit):
    """Read-only plain text, as tall as its content up to MAX_BODY_HEIGHT."""

    def __init__(self) -> None:
        super().__init__()
        self.setReadOnly(True)
        self.setAcceptRichText(False)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.document().setDocumentMargin(2)
        self.document().documentLayout().documentSizeChanged.connect(self._size_changed)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        width = self.viewport().width()
        if self.document().textWidth() != width:
            self.document().setTextWidth(width)
        self._fit()

    def _size_changed(self, _size: object) -> None:
        self._fit()

    def _fit(self) -> None:
        natural = math.ceil(self.document().size().height()) + 4
        scroll = natural > MAX_BODY_HEIGHT
        policy = Qt.ScrollBarPolicy.ScrollBarAsNeeded if scroll else Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        if self.verticalScrollBarPolicy() != policy:
            self.setVerticalScrollBarPolicy(policy)
        height = min(MAX_BODY_HEIGHT, natural)
        if self.height() != height:
            self.setFixedHeight(height)


class ThinkingBlock(QFrame):
    """One message's thinking. ``clock`` is injectable for tests (seconds, monotonic)."""

    def __init__(
        self,
        text: str = "",
        *,
        live: bool = True,
        elapsed_ms: int = 0,
        clock: Callable[[], float] = time.monotonic,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("ThinkingBlock")
        self.text = text
        self._pending = ""
        self._clock = clock
        self._started = clock()
        self._elapsed_ms = elapsed_ms
        self.state = "live" if live else "done"  # live | done | stopped
        c = theme.colors()
        self.setStyleSheet(
            f"#ThinkingBlock {{ border-left: 3px solid {c.border}; background: transparent; }}"
            f"#ThinkingBlock QTextEdit {{ background: transparent; color: {c.muted}; border: none; }}"
            f"#ThinkingBlock QToolButton {{ color: {c.muted}; border: none; padding: 2px 4px; }}"
            f"#ThinkingBlock QToolButton:hover {{ color: {c.text}; }}"
        )

        outer = QVBoxLayout(self)
        outer.setContentsMargins(10, 2, 4, 2)
        outer.setSpacing(2)
        header = QHBoxLayout()
        header.setContentsMargins(0, 0, 0, 0)
        self.toggle = QToolButton()
        self.toggle.setCheckable(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setIconSize(icons.icon_size(14))
        self.toggle.setCursor(Qt.CursorShape.PointingHandCursor)
        self.toggle.toggled.connect(self._toggled)
        header.addWidget(self.toggle)
        header.addStretch(1)
        self.copy_button = QToolButton()
        self.copy_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.copy_button.clicked.connect(self.copy)
        header.addWidget(self.copy_button)
        outer.addLayout(header)
        self.body = _Body()
        mark_content(self.body)  # the model's words, not UI text
        self.body.setFont(theme.ui_font())
        outer.addWidget(self.body)

        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(FLUSH_INTERVAL_MS)
        self._flush_timer.timeout.connect(self._flush)
        self._ticker = QTimer(self)
        self._ticker.setInterval(TICK_MS)
        self._ticker.timeout.connect(self._update_header)
        self._copied_timer = QTimer(self)
        self._copied_timer.setSingleShot(True)
        self._copied_timer.setInterval(1500)
        self._copied_timer.timeout.connect(self.retranslate)

        if text:
            self.body.setPlainText(text)
        self.toggle.setChecked(live)
        self.body.setVisible(live)
        if live:
            self._ticker.start()
        self.retranslate()

    # --- streaming ---------------------------------------------------------------------------------
    def append(self, delta: str) -> None:
        if self.state != "live":  # more thinking after a pause (a reasoning model may think again)
            self.resume()
        self.text += delta
        self._pending += delta
        if not self._flush_timer.isActive():
            self._flush_timer.start()

    def resume(self) -> None:
        self.state = "live"
        self._started = self._clock() - self._elapsed_ms / 1000
        self._ticker.start()
        self.toggle.setChecked(True)
        self.retranslate()

    def _flush(self) -> None:
        if not self._pending:
            return
        cursor = self.body.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(self._pending)
        self._pending = ""
        bar = self.body.verticalScrollBar()
        bar.setValue(bar.maximum())  # follow the newest thinking while it streams

    def finish(self, elapsed_ms: int | None = None) -> None:
        """The answer started: keep the text, collapse, show how long it thought."""
        self._end("done", elapsed_ms)

    def stop(self) -> None:
        """The turn ended while thinking (Stop, an error): keep what there is, say it stopped."""
        if self.state == "live":
            self._end("stopped", None)

    def _end(self, state: str, elapsed_ms: int | None) -> None:
        self._flush_timer.stop()
        self._flush()
        if self.state == "live":
            self._elapsed_ms = int((self._clock() - self._started) * 1000)
        if elapsed_ms:
            self._elapsed_ms = elapsed_ms
        self.state = state
        self._ticker.stop()
        self.toggle.setChecked(False)
        self.retranslate()

    def set_text(self, text: str) -> None:
        """The whole thinking text (the stored one when the message completes)."""
        self._flush_timer.stop()
        self._pending = ""
        self.text = text
        self.body.setPlainText(text)

    # --- actions -----------------------------------------------------------------------------------
    @property
    def expanded(self) -> bool:
        return self.toggle.isChecked()

    def set_expanded(self, expanded: bool) -> None:
        self.toggle.setChecked(expanded)

    def _toggled(self, expanded: bool) -> None:
        self.body.setVisible(expanded)
        self._update_header()

    def copy(self) -> None:
        self._flush()
        QGuiApplication.clipboard().setText(self.text)
        self.copy_button.setText(tr("chat.thinking.copied"))
        self._copied_timer.start()

    @property
    def elapsed_s(self) -> float:
        if self.state == "live":
            return self._clock() - self._started
        return self._elapsed_ms / 1000

    # --- text --------------------------------------------------------------------------------------
    def header_text(self) -> str:
        seconds = _seconds(self.elapsed_s)
        if self.state == "live":
            return tr("chat.thinking.live", seconds=seconds)
        if self.state == "stopped":
            return tr("chat.thinking.stopped", seconds=seconds)
        if self._elapsed_ms < 100:  # unknown, or too short to be worth a number
            return tr("chat.thinking")
        return tr("chat.thinking.done", seconds=seconds)

    def _update_header(self) -> None:
        self.toggle.setText(self.header_text())
        c = theme.colors()
        self.toggle.setIcon(icons.icon("chevron_up" if self.expanded else "chevron_down", c.muted))
        self.toggle.setToolTip(tr("chat.thinking.hide" if self.expanded else "chat.thinking.show"))

    def retranslate(self) -> None:
        self._update_header()
        self.copy_button.setText(tr("chat.thinking.copy"))
        self.copy_button.setToolTip(tr("chat.thinking.copy.tip"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)


def _seconds(value: float) -> str:
    """Whole seconds from 10 s on; one decimal below ("3.4")."""
    return f"{value:.0f}" if value >= 10 else f"{value:.1f}"
