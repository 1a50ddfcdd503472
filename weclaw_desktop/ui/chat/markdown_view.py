"""Rich text for chat messages: a read-only view as tall as its content, and a body that streams.

:class:`MessageBody` renders a message as one or more :class:`MarkdownView`\\ s. A finished message is one
view, rendered once. While a message streams, its text is cut at *stable* points (a blank line outside a
code fence: nothing before it changes when more text arrives) into groups of about
:data:`GROUP_CHARS` characters; only the open group is rendered again, so the cost of a render does not
grow with the length of the answer, finished groups are never touched again, and the end of the stream
only renders the open group once more (no jump: the streamed rendering is the final one).
"""

from __future__ import annotations

import html
import math

from PySide6.QtCore import QEvent, QSize, Qt, QUrl
from PySide6.QtGui import (
    QColor,
    QDesktopServices,
    QGuiApplication,
    QResizeEvent,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import QFrame, QSizePolicy, QTextBrowser, QTextEdit, QVBoxLayout, QWidget

from weclaw_desktop.ui import theme
from weclaw_desktop.ui.markdown import Palette, Renderer, copied_text

#: Stable text per streamed view: a render costs at most this much Markdown (plus an unfinished block).
GROUP_CHARS = 3_000
SAFE_SCHEMES = ("http", "https", "mailto", "file")
LIST_INDENT = 18


def markdown_renderer() -> Renderer:
    c = theme.colors()
    return Renderer(Palette(text=c.text, muted=c.muted, code_bg=c.code_bg, border=c.border, link=c.link, dark=c.dark))


def document_style() -> str:
    c = theme.colors()
    return (
        f"p {{ margin-top: 0px; margin-bottom: 8px; }} h1 {{ font-size: x-large; }} "
        f"h2 {{ font-size: large; }} h3 {{ font-size: medium; }} pre {{ font-family: monospace; }} "
        f"a {{ color: {c.link}; }} li {{ margin-bottom: 2px; }}"
    )


def stable_split(text: str) -> int:
    """Where the finished Markdown blocks of a streaming text end: after the last blank line that is
    not inside an open code fence. Everything before it will not change when more text arrives."""
    scanner = StableScanner()
    return scanner.advance(text)


class StableScanner:
    """:func:`stable_split` for a text that only grows, in time proportional to the new text."""

    def __init__(self) -> None:
        self.pos = 0  # start of the first line not scanned yet
        self.in_fence = False
        self.split = 0

    def advance(self, text: str) -> int:
        pos, in_fence, split = self.pos, self.in_fence, self.split
        while True:
            end = text.find("\n", pos)
            if end < 0:
                break
            line = text[pos:end]
            stripped = line.lstrip()
            if stripped.startswith(("```", "~~~")):
                in_fence = not in_fence
            elif not in_fence and not line.strip() and pos > 0:
                split = end + 1
            pos = end + 1
        self.pos, self.in_fence, self.split = pos, in_fence, split
        return split


class MarkdownView(QTextBrowser):
    """A read-only rich-text view as tall as its content (no inner scroll bar): its height follows its width."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setOpenLinks(False)
        self.anchorClicked.connect(self._open_link)
        policy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.viewport().setAutoFillBackground(False)
        self.setObjectName("MarkdownView")  # transparent, no frame: a rule of the theme's style sheet
        self.document().setDocumentMargin(2)
        self.document().setIndentWidth(LIST_INDENT)  # Qt's 40 px per level pushes sub-lists far right
        self.document().setDefaultStyleSheet(document_style())
        self._height = 0
        # a bound method (not a lambda): Qt disconnects it when this view is destroyed
        self.document().documentLayout().documentSizeChanged.connect(self._size_changed)

    @staticmethod
    def _open_link(url: QUrl) -> None:
        code = copied_text(url.toString(QUrl.ComponentFormattingOption.FullyEncoded))
        if code is not None:  # a code block's Copy link
            clipboard = QGuiApplication.clipboard()
            if clipboard is not None:
                clipboard.setText(code)
            return
        if url.scheme().lower() in SAFE_SCHEMES:
            QDesktopServices.openUrl(url)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        """The height at ``width``. Only the width the view has (set in resizeEvent) lays the document out:
        layouts also ask at other widths (their size hints), and laying a long document out again for each
        such question — twice per render — is what made long answers cost more per token. Those get the
        height scaled from the real one; the real width's answer follows as soon as the view has it."""
        doc = self.document()
        current = doc.textWidth()
        if (current <= 0 or not self.isVisible()) and abs(current - width) >= 1:
            # not on screen yet (made or rebound just now): exact. Setting the width lays the whole
            # document out again even when it is the same width, so only a new width is set.
            doc.setTextWidth(width)
            current = width
        height = math.ceil(doc.size().height()) + 2
        if abs(current - width) < 1:
            return height
        return max(height, math.ceil(height * current / max(1, width)))

    def sizeHint(self) -> QSize:
        # the height at the width the document is laid out at now: never a new layout of it (layouts ask
        # for size hints often, and at other widths than the view will get)
        return QSize(200, math.ceil(self.document().size().height()) + 2)

    def minimumSizeHint(self) -> QSize:
        return QSize(50, 10)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        width = self.viewport().width()
        if event.oldSize().width() != event.size().width() and self.document().textWidth() != width:
            self.document().setTextWidth(width)

    def _size_changed(self, _size: object) -> None:
        height = math.ceil(self.document().size().height()) + 2
        if height != self._height:
            self._height = height
            self.updateGeometry()
            content_resized(self)

    def set_html(self, text: str) -> None:
        self.setHtml(text)

    def forget_width(self) -> None:
        self.clear()  # an empty document: dropping the width costs no layout of the old text
        self.document().setTextWidth(-1)
        self._height = 0

    def highlight(self, needle: str, current: int = -1) -> int:
        """Mark every occurrence of ``needle`` (case-insensitive); ``current`` is drawn stronger. Returns the count."""
        selections: list[QTextEdit.ExtraSelection] = []
        if needle:
            c = theme.colors()
            cursor = QTextCursor(self.document())
            n = 0
            while True:
                cursor = self.document().find(needle, cursor)
                if cursor.isNull():
                    break
                sel = QTextEdit.ExtraSelection()
                sel.cursor = cursor
                fmt = QTextCharFormat()
                fmt.setBackground(QColor(c.accent if n == current else c.warning).lighter(100 if c.dark else 160))
                if n == current:
                    fmt.setForeground(QColor(c.accent_text))
                sel.format = fmt
                selections.append(sel)
                n += 1
        self.setExtraSelections(selections)
        return len(selections)

    def match_y(self, needle: str, index: int) -> int | None:
        """The y (in this view) of the ``index``-th occurrence of ``needle``."""
        cursor = QTextCursor(self.document())
        for _ in range(index + 1):
            cursor = self.document().find(needle, cursor)
            if cursor.isNull():
                return None
        return self.cursorRect(cursor).top()


def content_resized(widget: QWidget) -> None:
    """Tell the chat column that the item widget holding ``widget`` changed height."""
    w: QWidget | None = widget
    while w is not None and w.property("chatItemKey") is None:
        w = w.parentWidget()
    if w is not None:
        w.updateGeometry()
        from PySide6.QtCore import QCoreApplication

        # to the item widget itself: the column's filter sees which item changed (the parent's own
        # LayoutRequest only says that one of them did)
        QCoreApplication.postEvent(w, QEvent(QEvent.Type.LayoutRequest))


class MessageBody(QWidget):
    """The text of one message: one view, or while streaming, a view per group of stable blocks."""

    def __init__(self, renderer: Renderer, *, plain: bool = False, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._renderer = renderer
        self._plain = plain  # the user's words: shown as typed, never as Markdown
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(0)
        policy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.views: list[MarkdownView] = []
        self.renders = 0
        self._scanner = StableScanner()
        self._group_start = 0  # where the open (last) view's text starts
        self._streamed = False

    def rebind(self, renderer: Renderer) -> None:
        """Before showing another message (a recycled widget): the renderer may be another palette's, and the
        views forget the width they were laid out at (another message's bubble may be narrower: the height
        scaled from the old width would be too tall, and never corrected if the real one did not change)."""
        self._renderer = renderer
        for view in self.views:
            view.forget_width()

    def _open_view(self) -> MarkdownView:
        view = MarkdownView()
        self._layout.addWidget(view)
        self.views.append(view)
        return view

    def _html(self, text: str) -> str:
        if self._plain:
            return "<p>" + html.escape(text).replace("\n", "<br>") + "</p>"
        return self._renderer.render(text)

    def set_text(self, text: str, rendered: str | None = None) -> str:
        """Show ``text`` whole (a finished message); ``rendered`` is its HTML if already known. Returns the HTML."""
        for view in self.views[1:]:
            self._layout.removeWidget(view)
            view.hide()
            view.deleteLater()
        self.views = self.views[:1]
        view = self.views[0] if self.views else self._open_view()
        markup = rendered if rendered is not None else self._html(text)
        view.set_html(markup)
        self._scanner = StableScanner()
        self._group_start = 0
        self._streamed = False
        self.renders += 1
        return markup

    def stream(self, text: str) -> None:
        """Render a growing text: close the open group once it holds enough stable text, render the rest."""
        self._streamed = True
        split = self._scanner.advance(text)
        view = self.views[-1] if self.views else self._open_view()
        if split - self._group_start >= GROUP_CHARS:
            view.set_html(self._html(text[self._group_start : split]))
            self._group_start = split
            view = self._open_view()
        view.set_html(self._html(text[self._group_start :]))
        self.renders += 1

    @property
    def streamed(self) -> bool:
        return self._streamed

    def plain_text(self) -> str:
        return "\n".join(v.toPlainText() for v in self.views)

    def to_html(self) -> str:
        return "".join(v.toHtml() for v in self.views)

    def documents(self) -> list[QTextDocument]:
        return [v.document() for v in self.views]

    def restyle(self) -> None:
        for view in self.views:
            view.document().setDefaultStyleSheet(document_style())
