"""The conversation: one widget per message and per tool call, rendered from typed turn events.

Streaming never re-renders the transcript: text deltas go to the one message being streamed, whose
Markdown is re-rendered at most every :data:`RENDER_INTERVAL_MS` (a single-shot timer), and finished
messages are never touched again.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable

from PySide6.QtCore import QEvent, Qt, QTimer, QUrl
from PySide6.QtGui import QDesktopServices, QResizeEvent, QTextBlockFormat, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from weclaw_desktop.agent import events as ev
from weclaw_desktop.i18n import Text
from weclaw_desktop.toolkit.registry import ToolRegistry
from weclaw_desktop.ui import theme
from weclaw_desktop.ui.markdown import Palette, Renderer
from weclaw_desktop.ui.thinking_block import ThinkingBlock
from weclaw_desktop.ui.tool_board import CallInfo, ToolBoard
from weclaw_desktop.ui.tool_card import CardActions, ToolCallCard
from weclaw_desktop.ui.translation import mark_content

RENDER_INTERVAL_MS = 60
#: A finished message up to this size is rendered once more as a whole (exact Markdown across blocks);
#: longer ones keep their block-wise streamed rendering, so finishing never stalls the UI.
FULL_RENDER_LIMIT = 20_000


def stable_split(text: str) -> int:
    """Where the finished Markdown blocks of a streaming text end: after the last blank line that is
    not inside an open code fence. Everything before it will not change when more text arrives."""
    end = text.rfind("\n\n")
    while end > 0:
        head = text[:end]
        fences = sum(1 for line in head.split("\n") if line.lstrip().startswith(("```", "~~~")))
        if fences % 2 == 0:
            return end + 2
        end = text.rfind("\n\n", 0, end)
    return 0


def markdown_renderer() -> Renderer:
    c = theme.colors()
    return Renderer(Palette(text=c.text, muted=c.muted, code_bg=c.code_bg, border=c.border, link=c.link, dark=c.dark))


class MarkdownView(QTextBrowser):
    """A read-only rich-text view as tall as its content (no inner scroll bar)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setOpenLinks(False)
        self.anchorClicked.connect(self._open_link)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.viewport().setAutoFillBackground(False)
        self.setStyleSheet("QTextBrowser { background: transparent; border: none; padding: 0; }")
        self.document().setDocumentMargin(2)
        c = theme.colors()
        self.document().setDefaultStyleSheet(
            f"p {{ margin-top: 0px; margin-bottom: 8px; }} h1 {{ font-size: x-large; }} "
            f"h2 {{ font-size: large; }} h3 {{ font-size: medium; }} pre {{ font-family: monospace; }} "
            f"a {{ color: {c.link}; }} li {{ margin-bottom: 2px; }}"
        )
        # a bound method (not a lambda): Qt disconnects it when this view is destroyed, so the layout's
        # last size change during destruction cannot call into a deleted widget
        self.document().documentLayout().documentSizeChanged.connect(self._size_changed)

    @staticmethod
    def _open_link(url: QUrl) -> None:
        if url.scheme().lower() in ("http", "https", "mailto", "file"):
            QDesktopServices.openUrl(url)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        width = self.viewport().width()
        if event.oldSize().width() != event.size().width() and self.document().textWidth() != width:
            self.document().setTextWidth(width)  # a height change (while streaming) needs no relayout
        self._fit()

    def _size_changed(self, _size: object) -> None:
        self._fit()

    def _fit(self) -> None:
        height = math.ceil(self.document().size().height()) + 2
        if self.height() != height:
            self.setFixedHeight(height)


class MessageWidget(QWidget):
    """One chat message. Assistant messages stream: :meth:`append` then :meth:`finish`."""

    def __init__(self, role: str, text: str = "", renderer: Renderer | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        mark_content(self)  # the user's and the model's words
        self.role = role
        self.text = text
        self._renderer = renderer or markdown_renderer()
        self._stable_len = 0  # characters of text already rendered as finished blocks
        self._tail_pos = 0  # document position where the still-changing tail starts
        self._streaming = False
        self.renders = 0  # how many times the Markdown was rendered (the bench and tests read it)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(RENDER_INTERVAL_MS)
        self._timer.timeout.connect(self.render_now)

        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.bubble = QFrame()
        self.bubble.setObjectName("UserBubble" if role == "user" else "Bubble")
        inner = QVBoxLayout(self.bubble)
        inner.setContentsMargins(14, 10, 14, 8)
        inner.setSpacing(2)
        self.view = MarkdownView()
        inner.addWidget(self.view)
        if role == "user":
            row.addStretch(1)
            self.bubble.setMaximumWidth(640)
            self.bubble.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
            row.addWidget(self.bubble, 4)
        else:
            row.addWidget(self.bubble, 1)
        self.render_now()

    def append(self, delta: str) -> None:
        self.text += delta
        self._streaming = True
        if not self._timer.isActive():
            self._timer.start()

    def set_text(self, text: str) -> None:
        self.text = text
        self.render_now()

    def finish(self) -> None:
        self._timer.stop()
        if self._streaming and len(self.text) > FULL_RENDER_LIMIT:
            self._render_incremental()
        else:
            self._streaming = False
            self.render_now()
        self._streaming = False

    def render_now(self) -> None:
        self._timer.stop()
        if self._streaming and self.role != "user":
            self._render_incremental()
            return
        self._stable_len = self._tail_pos = 0
        if self.role == "user":
            body = html.escape(self.text).replace("\n", "<br>")
            self.view.setHtml(f"<p>{body}</p>")
        else:
            self.view.setHtml(self._renderer.render(self.text))
        self.renders += 1

    def _render_incremental(self) -> None:
        """Render only what changed: newly finished blocks are appended once, the tail is replaced."""
        doc = self.view.document()
        if self._stable_len == 0 and self._tail_pos == 0:
            doc.clear()
        cursor = QTextCursor(doc)
        split = stable_split(self.text)
        if split > self._stable_len:
            self._replace_tail(cursor, "")
            cursor.insertHtml(self._renderer.render(self.text[self._stable_len : split]))
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
            self._tail_pos = cursor.position()
            self._stable_len = split
        self._replace_tail(cursor, self._renderer.render(self.text[self._stable_len :]))
        self.renders += 1

    def _replace_tail(self, cursor: QTextCursor, html: str) -> None:
        cursor.setPosition(self._tail_pos)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        if html:
            cursor.insertHtml(html)

    def plain_text(self) -> str:
        return self.view.toPlainText()


class NoticeWidget(QLabel):
    """A one-line notice in the chat. Made from a :class:`Text`, it follows a language change."""

    def __init__(self, text: str | Text, kind: str = "info", parent: QWidget | None = None) -> None:
        super().__init__(str(text), parent)
        self.message = text
        c = theme.colors()
        color = {"error": c.danger, "warning": c.warning}.get(kind, c.muted)
        self.kind = kind
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setStyleSheet(f"color:{color}; padding: 4px 12px;")

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange and isinstance(self.message, Text):
            self.setText(str(self.message))
        super().changeEvent(event)


class ChatView(QScrollArea):
    def __init__(
        self, registry: ToolRegistry, board: ToolBoard, actions: CardActions, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.registry = registry
        self.board = board
        self.card_actions = actions
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._body = QWidget()
        self._body.setObjectName("ChatBody")
        self._layout = QVBoxLayout(self._body)
        self._layout.setContentsMargins(24, 18, 24, 18)
        self._layout.setSpacing(12)
        self._layout.addStretch(1)
        self.setWidget(self._body)
        self._renderer = markdown_renderer()
        self.cards: dict[str, ToolCallCard] = {}
        self.messages: list[MessageWidget] = []
        self.current: MessageWidget | None = None
        self.thinking: ThinkingBlock | None = None  # the thinking of the message being streamed
        self._stick = True
        self._last_error = ""
        self.verticalScrollBar().rangeChanged.connect(self._range_changed)
        self.verticalScrollBar().valueChanged.connect(self._scrolled)
        self._ticker = QTimer(self)
        self._ticker.setInterval(250)
        self._ticker.timeout.connect(self._tick)

    # --- layout helpers -------------------------------------------------------------------------
    def _add(self, widget: QWidget) -> None:
        self._layout.insertWidget(self._layout.count() - 1, widget)

    def _scrolled(self, value: int) -> None:
        bar = self.verticalScrollBar()
        self._stick = value >= bar.maximum() - 24

    def _range_changed(self, _lo: int, hi: int) -> None:
        if self._stick:
            self.verticalScrollBar().setValue(hi)

    def scroll_to_end(self) -> None:
        self._stick = True
        self.verticalScrollBar().setValue(self.verticalScrollBar().maximum())

    def clear(self) -> None:
        while self._layout.count() > 1:
            item = self._layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.cards.clear()
        self.messages.clear()
        self.current = None
        self.thinking = None
        self._ticker.stop()

    @property
    def has_content(self) -> bool:
        """Anything shown: messages, tool cards or notices."""
        return self._layout.count() > 1

    # --- content --------------------------------------------------------------------------------
    def add_message(self, role: str, text: str) -> MessageWidget:
        widget = MessageWidget(role, text, self._renderer)
        self._add(widget)
        self.messages.append(widget)
        return widget

    def add_user(self, text: str) -> MessageWidget:
        self.current = None
        self.scroll_to_end()
        return self.add_message("user", text)

    def add_notice(self, text: str | Text, kind: str = "info") -> NoticeWidget:
        notice = NoticeWidget(text, kind)
        self._add(notice)
        return notice

    def add_card(self, call: CallInfo) -> ToolCallCard:
        card = ToolCallCard(call, self.registry, self.card_actions)
        self._add(card)
        self.cards[call.call_id] = card
        return card

    def load_history(self, items: Iterable[tuple[str, str] | tuple[str, str, str, int]]) -> None:
        """Show stored messages: (role, text) or (role, text, reasoning, reasoning_ms); tool rows come as role
        ``tool`` and are skipped. An assistant message's thinking is shown above it, collapsed."""
        self.clear()
        for role, text, *thought in items:
            if role == "assistant" and thought and thought[0]:
                ms = thought[1] if len(thought) > 1 else 0
                self.add_thinking(str(thought[0]), live=False, elapsed_ms=ms if isinstance(ms, int) else 0)
            if role in ("user", "assistant") and text.strip():
                self.add_message(role, text)
        self.scroll_to_end()

    def add_thinking(self, text: str = "", *, live: bool = True, elapsed_ms: int = 0) -> ThinkingBlock:
        block = ThinkingBlock(text, live=live, elapsed_ms=elapsed_ms)
        self._add(block)
        return block

    def refresh_phone_buttons(self) -> None:
        for card in self.cards.values():
            card.refresh_phone()

    # --- events ---------------------------------------------------------------------------------
    def handle(self, event: ev.Event, call: CallInfo | None) -> None:
        """Render one turn event. ``call`` is the board's record of the call the event is about."""
        if isinstance(event, ev.TextDelta):
            self._end_thinking()
            if self.current is None:
                self.current = self.add_message("assistant", "")
            self.current.append(event.text)
        elif isinstance(event, ev.ReasoningDelta | ev.ReasoningRetracted):
            self._thinking_event(event)
        elif isinstance(event, ev.AssistantMessage):
            self._end_thinking(event.reasoning, event.reasoning_ms)
            self.thinking = None
            self._close_current(event.text)
        elif isinstance(event, ev.ToolsWithheld):
            self.add_notice(Text("chat.tools_withheld", model=event.model), "warning")
        elif isinstance(event, ev.ToolCallRequested) and call is not None:
            self._end_thinking()
            self._close_current(None)
            self.add_card(call)
            self._ticker.start()
        elif call is not None and call.call_id in self.cards:
            self.cards[call.call_id].update_from(call)
        elif isinstance(event, ev.ErrorOccurred):
            self._stop_thinking()
            self._close_current(None)
            self._last_error = event.message
            self.add_notice(Text("chat.error", message=event.message), "error")
        elif isinstance(event, ev.TurnDone):
            self._stop_thinking()
            self._close_current(None)
            for card in self.cards.values():
                card.update_from(card.call)
            self._ticker.stop()
            if event.reason == "cancelled":
                self.add_notice(Text("chat.stopped"), "warning")
            elif event.reason in ("max_rounds", "loop_guard"):
                self.add_notice(Text(f"chat.done.{event.reason}"), "warning")  # event.message is the log's
            elif event.reason in ("error", "budget") and event.message and event.message != self._last_error:
                self.add_notice(event.message, "error")
            self._last_error = ""

    def _close_current(self, final_text: str | None) -> None:
        current = self.current
        self.current = None
        if current is None:
            if final_text:
                self.add_message("assistant", final_text)
            return
        if final_text is not None and final_text != current.text:  # differs only when thinking was retracted
            current.text = final_text
        if not current.text.strip():
            self.messages.remove(current)
            current.deleteLater()
            return
        current.finish()

    # --- thinking (ui/thinking_block.py) ---------------------------------------------------------
    def _thinking_event(self, event: ev.ReasoningDelta | ev.ReasoningRetracted) -> None:
        text = event.text
        if isinstance(event, ev.ReasoningRetracted) and self.current is not None:
            current, self.current = self.current, None  # what streamed as answer was thinking
            self.messages.remove(current)
            current.deleteLater()
        if self.thinking is None:
            self.thinking = self.add_thinking()
        if text:
            self.thinking.append(text)

    def _end_thinking(self, text: str = "", elapsed_ms: int = 0) -> None:
        """The answer (or a tool call, or the end of the message) started: collapse the thinking."""
        block = self.thinking
        if block is None:
            if text:  # reasoning the stream did not show as it came (it is stored): show it now
                self.thinking = self.add_thinking(text, live=False, elapsed_ms=elapsed_ms)
            return
        if text and text != block.text:
            block.set_text(text)
        if block.state == "live" or elapsed_ms:
            block.finish(elapsed_ms or None)

    def _stop_thinking(self) -> None:
        if self.thinking is not None:
            self.thinking.stop()
            self.thinking = None

    def _tick(self) -> None:
        running = [c for c in self.cards.values() if c.call.status == "running"]
        for card in running:
            card.update_from(card.call)
