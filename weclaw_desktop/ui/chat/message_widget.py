"""The widget of one chat message, made from (and for) a :class:`MessageItem`.

Layout of the bubble, top to bottom — each slot is an empty box until a feature fills it::

    top_slot       e.g. the "Thinking" block (ui/thinking_block.py) of a reasoning model
    body           the text (MessageBody: Markdown for the assistant, plain for the user)
    status_line    "Stopped here" / "Cut off" for an answer that did not finish (hidden otherwise)
    chips_slot     e.g. attachment chips of a sent message
    actions_slot   e.g. the message's action bar (copy, edit, regenerate, "< 2/3 >")

The widget may be destroyed and made again at any time (the chat keeps only the widgets near the
screen): features fill the slots from the item's state in a *decorator* registered with
:meth:`weclaw_desktop.ui.chat_view.ChatView.add_message_decorator`, which runs for every message widget
made, and keep their own state in ``item.data``.

A dropped widget may be *rebound* to another message of its role: its slots are emptied first. A slot
widget marked ``setProperty(REUSABLE, True)`` is not deleted then but kept aside, hidden and out of the
layout, for the decorator that made it to take back (:meth:`MessageWidget.take_spare`) and fill with the
new item's state (a message's action bar: its buttons cost more to make than to relabel); what no
decorator took is deleted after the decorators ran (:meth:`MessageWidget.drop_spares`).
"""

from __future__ import annotations

import time
from typing import TypeVar

from PySide6.QtCore import QEvent, QRect, QSize
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QBoxLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLayout,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from weclaw_desktop.i18n import tr
from weclaw_desktop.ui.chat.column import REPORTS_RESIZES
from weclaw_desktop.ui.chat.items import MessageItem
from weclaw_desktop.ui.chat.markdown_view import MessageBody, content_resized
from weclaw_desktop.ui.markdown import Renderer
from weclaw_desktop.ui.translation import mark_content

RENDER_INTERVAL_MS = 60
#: The user's bubble takes at most this share of the column.
USER_SHARE = 0.8
BUBBLE_PAD = (14, 10, 14, 8)  # left, top, right, bottom
#: The property of a slot widget that a rebound message keeps aside for its decorator (see the module docstring).
REUSABLE = "reusableSlotWidget"
W = TypeVar("W", bound=QWidget)


def when_text(ts: float) -> str:
    """A message's time for its tooltip: "14:05" today, "12-03 14:05" this year, else with the year."""
    if not ts:
        return ""
    now = time.localtime()
    at = time.localtime(ts)
    if at.tm_year == now.tm_year and at.tm_yday == now.tm_yday:
        return time.strftime("%H:%M", at)
    if at.tm_year == now.tm_year:
        return time.strftime("%m-%d %H:%M", at)
    return time.strftime("%Y-%m-%d %H:%M", at)


class MessageWidget(QWidget):
    """One message. ``item`` is the source of truth; :meth:`refresh` shows it again after a change."""

    def __init__(
        self, item: MessageItem, renderer: Renderer, *, html: str | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        mark_content(self)  # the user's and the model's words
        self.setProperty(REPORTS_RESIZES, True)  # the bubble's layout requests become this widget's (event())
        self.item = item
        self.role = item.role
        self._renderer = renderer
        policy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.rendered_html: str | None = html  # the finished text's HTML (the chat caches it)
        self.thinking: QWidget | None = None  # the "Thinking" block in the top slot, when the model thought
        self._spares: list[QWidget] = []  # reusable slot widgets of the item shown before (see unbind)

        self.bubble = QFrame(self)
        self.bubble.setObjectName("UserBubble" if item.role == "user" else "Bubble")
        inner = QVBoxLayout(self.bubble)
        inner.setContentsMargins(*BUBBLE_PAD)
        inner.setSpacing(4)
        self.top_slot = QVBoxLayout()
        self.top_slot.setSpacing(4)
        inner.addLayout(self.top_slot)
        self.body = MessageBody(renderer, plain=item.role == "user")
        inner.addWidget(self.body)
        self.status_line = QLabel()
        self.status_line.setObjectName("Muted")
        self.status_line.setVisible(False)
        inner.addWidget(self.status_line)
        self.chips_slot = QHBoxLayout()
        self.chips_slot.setSpacing(6)
        inner.addLayout(self.chips_slot)
        self.actions_slot = QHBoxLayout()
        self.actions_slot.setSpacing(4)
        inner.addLayout(self.actions_slot)
        self.render_now()
        self.retranslate()

    # --- recycling (the chat keeps a few dropped widgets and rebinds them: making one costs ms) ------
    def unbind(self) -> None:
        """Empty the widget for another item: whatever decorators and the thinking block put in the slots
        is deleted (a REUSABLE one is kept aside for :meth:`take_spare`), highlights are removed."""
        self.drop_spares()
        for name in ("top", "chips", "actions"):
            _empty(self.slot(name), self._spares)
        self.thinking = None
        for view in self.body.views:
            view.setExtraSelections([])

    def bind(self, item: MessageItem, renderer: Renderer, *, html: str | None = None) -> None:
        """Show ``item`` (of the same role) in this emptied widget; the chat's decorators run again after."""
        assert item.role == self.role, "a message widget is rebound only to a message of its role"
        self.item = item
        self._renderer = renderer
        self.body.rebind(renderer)  # also forgets the width the last message was laid out at
        self.rendered_html = html
        self.render_now()
        self.retranslate()

    def take_spare(self, kind: type[W]) -> W | None:
        """A REUSABLE slot widget of type ``kind`` the previous item's decorators left, to fill and put back in
        a slot; None when there is none (a new widget, or the last item had none)."""
        for i, widget in enumerate(self._spares):
            if isinstance(widget, kind):
                del self._spares[i]
                return widget
        return None

    def drop_spares(self) -> None:
        """Delete the kept slot widgets no decorator took back (the chat calls this after the decorators)."""
        for widget in self._spares:
            widget.setParent(None)  # hidden and out of every layout: no longer found among the children
            widget.deleteLater()
        self._spares = []

    # --- the API for features -------------------------------------------------------------------
    def slot(self, name: str) -> QBoxLayout:
        """``top`` | ``chips`` | ``actions``: add widgets there (see the module docstring)."""
        return {"top": self.top_slot, "chips": self.chips_slot, "actions": self.actions_slot}[name]

    @property
    def text(self) -> str:
        return self.item.text

    @property
    def renders(self) -> int:
        return self.body.renders

    @property
    def view(self) -> QWidget:
        """The (first) text view; a streamed answer may have several (``body.views``)."""
        return self.body.views[0]

    def plain_text(self) -> str:
        return self.body.plain_text()

    # --- rendering ------------------------------------------------------------------------------
    def render_now(self) -> None:
        """Show the item's text: streamed block-wise while it streams (the chat's timer calls this at most
        every RENDER_INTERVAL_MS), whole once otherwise."""
        item = self.item
        if item.streaming or self.body.streamed:
            self.body.stream(item.text)  # a finished stream keeps its streamed rendering (no jump)
        else:
            self.rendered_html = self.body.set_text(item.text, self.rendered_html)
        self._show_status()
        self._content_changed()

    def finish(self) -> None:
        """The stream ended: one last render of the open group."""
        self.render_now()

    def refresh(self) -> None:
        """The item changed in another way (text replaced, status): show it whole again."""
        self.rendered_html = self.body.set_text(self.item.text)
        self._show_status()
        self._content_changed()

    def _content_changed(self) -> None:
        for view in self.body.views:
            view.updateGeometry()
        self.body.updateGeometry()
        layout = self.bubble.layout()
        if layout is not None:
            layout.invalidate()
        content_resized(self)

    def _show_status(self) -> None:
        status = self.item.status
        shown = status in ("partial", "cancelled")
        if shown:
            self.status_line.setText(tr(f"chat.message.{status}"))
        self.status_line.setVisible(shown)

    def retranslate(self) -> None:
        self._show_status()
        self.bubble.setToolTip(when_text(self.item.created_at))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    # --- geometry: the bubble is placed by hand (user's to the right, at most USER_SHARE wide) ------
    def _bubble_rect(self, width: int) -> QRect:
        if self.item.role != "user":
            return QRect(0, 0, width, 0)
        cap = int(width * USER_SHARE)
        pad = BUBBLE_PAD[0] + BUBBLE_PAD[2] + 8
        fm = self.body.fontMetrics()
        natural = max((fm.horizontalAdvance(line) for line in self.item.text.split("\n")[:200]), default=0) + pad
        extra = max((self.slot(n).sizeHint().width() + pad for n in ("top", "chips", "actions")), default=0)
        w = max(min(cap, max(natural, extra)), min(cap, 80))
        return QRect(width - w, 0, w, 0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        rect = self._bubble_rect(width)
        return self.bubble.heightForWidth(rect.width())

    def sizeHint(self) -> QSize:
        width = max(200, self.width())
        return QSize(width, self.heightForWidth(width))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        rect = self._bubble_rect(self.width())
        rect.setHeight(self.height())
        self.bubble.setGeometry(rect)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:  # the bubble's content changed size
            self.updateGeometry()
        return super().event(event)


def _empty(layout: QLayout, spares: list[QWidget]) -> None:
    while layout.count():
        entry = layout.takeAt(0)
        if entry is None:
            break
        widget = entry.widget()
        if widget is not None:
            widget.hide()
            if widget.property(REUSABLE):
                spares.append(widget)
            else:
                widget.deleteLater()
        else:
            inner = entry.layout()
            if inner is not None:
                _empty(inner, spares)
