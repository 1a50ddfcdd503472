"""The conversation view: items (messages, tool-call cards, notices) in a virtualised column.

Architecture (see also /docs in the closing note of #17):

- **Items are the truth, widgets are views.** :class:`ChatView` keeps the open chat as a list of items
  (``ui/chat/items.py``: :class:`MessageItem`, :class:`CallItem`, :class:`NoticeItem`) and makes widgets
  only for those on and near the screen (``ui/chat/column.py``). Opening a chat of 5,000 messages makes
  a dozen widgets; leaving it drops them all. A widget can be destroyed and made again at any time.
- **Per-message widget API** (for message actions, thinking blocks, attachment chips, timestamps):
  :class:`MessageWidget` (``ui/chat/message_widget.py``) has three slots — ``top`` (the "Thinking"
  block), ``chips`` (attachments), ``actions`` (the action bar) — and a timestamp tooltip. Fill them in a
  decorator: ``unsubscribe = chat.add_message_decorator(fn)``; ``fn(widget)`` runs for every message
  widget made (now and later, after scrolling or a theme change), reads ``widget.item`` and keeps its state
  in ``widget.item.data``. Decorators must be cheap (they run while scrolling) and must not keep the widget.
- **Item API**: :meth:`add_message` / :meth:`add_user` / :meth:`add_notice` / :meth:`add_card` append;
  :meth:`insert_item`, :meth:`remove_item`, :meth:`replace_text` (e.g. paging a branch) and
  :meth:`item_changed` (anything else: the widget is made again) change; :meth:`widget_for` gives the live
  widget (made if asked); :meth:`scroll_to` brings an item on screen; :meth:`message_items`,
  :meth:`last_user_item`; the ``edit_last_requested`` signal (Up in an empty composer, see the window).
- **Streaming**: text deltas are appended to the current item in O(1); one timer renders the streaming
  message at most every 60 ms (120 ms past 60k characters), and a render costs at most one group of
  ~3,000 characters (``ui/chat/markdown_view.py``); nothing else is touched while a turn streams. At the
  end of a turn only that turn's cards are refreshed.
- **Restore**: :meth:`load_transcript` shows a stored chat as it was (``agent/transcript.py``): messages
  with their cut-off/stopped marks, every tool card with status, arguments, result and files, notices for
  turns that ended in an error, were stopped, hit a limit or were interrupted.
- **Theme and language**: :meth:`restyle` (called on a theme change) renders every live widget again in
  the new palette; widgets retranslate themselves on LanguageChange and items hold :class:`Text`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QWidget

from weclaw_desktop.agent import events as ev
from weclaw_desktop.agent.transcript import Transcript
from weclaw_desktop.i18n import Text
from weclaw_desktop.toolkit.registry import ToolRegistry
from weclaw_desktop.ui.chat.column import VirtualColumn
from weclaw_desktop.ui.chat.items import CallItem, ChatItem, MessageItem, NoticeItem
from weclaw_desktop.ui.chat.markdown_view import MarkdownView, content_resized, markdown_renderer, stable_split
from weclaw_desktop.ui.chat.message_widget import RENDER_INTERVAL_MS, MessageWidget
from weclaw_desktop.ui.chat.notice import NoticeWidget
from weclaw_desktop.ui.chat.restore import transcript_items
from weclaw_desktop.ui.markdown import warm_up_highlighting
from weclaw_desktop.ui.thinking_block import ThinkingBlock
from weclaw_desktop.ui.tool_board import CallInfo, ToolBoard
from weclaw_desktop.ui.tool_card import CardActions, ToolCallCard

__all__ = [
    "CallItem",
    "ChatView",
    "MarkdownView",
    "MessageItem",
    "MessageWidget",
    "NoticeItem",
    "NoticeWidget",
    "ToolCallCard",
    "stable_split",
]

#: Rendered HTML of finished messages kept for widgets made again while scrolling.
HTML_CACHE = 400
#: Messages pre-rendered after a chat opens (newest first): the screens above the end; older ones render
#: when scrolled to.
PRERENDER = 120
#: Dropped message widgets kept per role to be rebound to other messages (making one costs several ms).
POOL_SIZE = 8
CARD_POOL = "tool-card"  # the pool of dropped tool cards
#: After this long, the code highlighters are compiled in a worker thread (once per process).
WARM_UP_MS = 1500
#: Keys of a message item's ``data`` for its thinking (the block is made again from them).
THINKING = "thinking"  # live | done | stopped
THINKING_T0 = "thinking_t0"
THINKING_OPEN = "thinking_open"
REASONING_PARTS = "reasoning_parts"  # the thinking streamed so far, joined when it ends
MessageDecorator = Callable[[MessageWidget], None]


class ChatView(VirtualColumn):
    edit_last_requested = Signal(object)  # MessageItem: the user's last message, to edit and resend

    def __init__(
        self, registry: ToolRegistry, board: ToolBoard, actions: CardActions, parent: QWidget | None = None
    ) -> None:
        super().__init__(self._make_widget, parent)
        self.registry = registry
        self.board = board
        self.card_actions = actions
        self._renderer = markdown_renderer()
        self._decorators: list[MessageDecorator] = []
        self._html: OrderedDict[int, str] = OrderedDict()
        self.calls: dict[str, CallItem] = {}
        self.current: MessageItem | None = None  # the message streaming now
        self._turn_calls: list[str] = []  # call ids of the running turn
        self._last_error = ""
        self._stream = QTimer(self)
        self._stream.setSingleShot(True)
        self._stream.setInterval(RENDER_INTERVAL_MS)
        self._stream.timeout.connect(self._render_stream)
        self._ticker = QTimer(self)
        self._ticker.setInterval(250)
        self._ticker.timeout.connect(self._tick)
        self._todo: deque[MessageItem] = deque()  # messages to pre-render in idle time (newest first)
        self._pool: dict[str, list[QWidget]] = {}  # dropped message widgets by role (cards: CARD_POOL), to rebind
        self._recycling = True
        QTimer.singleShot(WARM_UP_MS, self._warm_up)
        self.prerendered = 0  # messages rendered ahead in idle time (tests, bench)
        self.rebound = 0  # widgets rebound from the pool instead of made (tests, bench)
        self.cards_rebound = 0  # of which tool cards

    def _warm_up(self) -> None:
        """Code highlighters compiled in a worker thread, before an answer needs them on the UI thread."""
        # no running loop (a window made outside qasync): the first answer compiles them
        with contextlib.suppress(RuntimeError):
            asyncio.get_running_loop().run_in_executor(None, warm_up_highlighting)  # once per process

    # --- the widget factory ---------------------------------------------------------------------
    def _make_widget(self, item: ChatItem) -> QWidget:
        if isinstance(item, MessageItem):
            pool = self._pool.get(item.role)
            if pool and not item.streaming:
                widget = pool.pop()
                assert isinstance(widget, MessageWidget)
                widget.bind(item, self._renderer, html=self._html.get(item.key))
                self.rebound += 1
            else:
                widget = MessageWidget(item, self._renderer, html=self._html.get(item.key))
            if item.role != "user" and not item.streaming and widget.rendered_html is not None:
                self._remember_html(item.key, widget.rendered_html)
            if item.role == "assistant" and (item.reasoning or item.data.get(THINKING)):
                self._add_thinking(widget)
            for decorate in list(self._decorators):
                decorate(widget)
            widget.drop_spares()
            return widget
        if isinstance(item, CallItem):
            cards = self._pool.get(CARD_POOL)
            if cards:
                card = cards.pop()
                assert isinstance(card, ToolCallCard)
                card.bind(item)
                self.rebound += 1
                self.cards_rebound += 1
                return card
            return ToolCallCard(item.call, self.registry, self.card_actions, item=item)
        if isinstance(item, NoticeItem):
            return NoticeWidget(item)
        raise TypeError(f"no widget for {type(item).__name__}")

    def _remember_html(self, key: int, html: str) -> None:
        self._html[key] = html
        self._html.move_to_end(key)
        while len(self._html) > HTML_CACHE:
            self._html.popitem(last=False)

    # --- idle work: Markdown -> HTML ahead of the scroll, then the newest messages ---------------------
    # Rendering runs on the Qt loop in slices (the column's idle timer), not in a thread: a thread holds
    # the GIL for several milliseconds at a time while the UI thread waits for it.
    def _needs_html(self, item: ChatItem) -> bool:
        return (
            isinstance(item, MessageItem)
            and item.role != "user"
            and not item.streaming
            and item.key not in self._html
            and item.key not in self._widgets
        )

    def prepare(self, item: ChatItem) -> bool:
        """Render a message the user is scrolling towards (its widget, made later, only lays it out)."""
        if not self._needs_html(item):
            return False
        assert isinstance(item, MessageItem)
        self._remember_html(item.key, self._renderer.render(item.text))
        self.prerendered += 1
        return True

    def background(self, deadline: float) -> bool:
        """The newest messages of a chat just opened, rendered in idle slices (the screens above the end)."""
        while self._todo:
            if time.perf_counter() > deadline:
                return True
            self.prepare(self._todo.popleft())
        return False

    def _prerender(self) -> None:
        self._todo = deque(
            [i for i in reversed(self.items) if isinstance(i, MessageItem) and self._needs_html(i)][:PRERENDER]
        )
        if self._todo:
            self._idle.start()

    # --- recycling: a dropped message widget is rebound to the next message of its role ------------
    def recycle(self, widget: QWidget) -> bool:
        if not self._recycling:
            return False
        if isinstance(widget, ToolCallCard):
            key = CARD_POOL  # bind() sets every part again
        elif isinstance(widget, MessageWidget) and not widget.item.streaming:
            key = widget.role
        else:
            return False
        pool = self._pool.setdefault(key, [])
        if len(pool) >= POOL_SIZE:
            return False
        if isinstance(widget, MessageWidget):
            widget.unbind()
        pool.append(widget)
        return True

    def _clear_pool(self) -> None:
        for pool in self._pool.values():
            for widget in pool:
                widget.deleteLater()
        self._pool.clear()

    # --- the model's thinking (ui/thinking_block.py) in the message's top slot ------------------------
    def _add_thinking(self, widget: MessageWidget) -> ThinkingBlock:
        item = widget.item
        state = item.data.get(THINKING, "done")
        text = "".join(item.data.get(REASONING_PARTS, [])) or item.reasoning
        live = state != "done"
        block = ThinkingBlock(text, live=live, elapsed_ms=item.reasoning_ms)
        if live and THINKING_T0 in item.data:
            block._started = item.data[THINKING_T0]  # a widget made again mid-thought keeps counting
        if state == "stopped":
            block.stop()
        block.set_expanded(bool(item.data.get(THINKING_OPEN, state == "live")))
        block.toggle.toggled.connect(lambda shown: item.data.__setitem__(THINKING_OPEN, shown))
        block.toggle.toggled.connect(lambda _shown: content_resized(block))
        block.body.document().documentLayout().documentSizeChanged.connect(lambda _size: content_resized(block))
        widget.slot("top").addWidget(block)
        widget.thinking = block
        return block

    def _thinking_block(self, item: MessageItem) -> ThinkingBlock | None:
        widget = self.widget_of(item)
        return getattr(widget, "thinking", None) if isinstance(widget, MessageWidget) else None

    def _think(self, event: ev.ReasoningDelta | ev.ReasoningRetracted) -> None:
        current = self._current_item(event.run_id)
        parts: list[str] = current.data.setdefault(REASONING_PARTS, [])
        if isinstance(event, ev.ReasoningRetracted):  # what streamed as the answer was thinking
            current.set_text("")
            self._html.pop(current.key, None)
        parts.append(event.text)
        current.data.setdefault(THINKING_T0, time.monotonic())
        was = current.data.get(THINKING)
        current.data[THINKING] = "live"
        block = self._thinking_block(current)
        if block is not None and not isinstance(event, ev.ReasoningRetracted):
            block.append(event.text)
        elif self.widget_of(current) is not None and (was != "live" or isinstance(event, ev.ReasoningRetracted)):
            self.item_changed(current)  # the widget gets its block (or loses the retracted answer)
        else:
            self.changed(current)

    def _end_thinking(self, item: MessageItem | None, state: str, *, text: str = "", elapsed_ms: int = 0) -> None:
        """The answer or a tool call started (``done``), or the turn ended while thinking (``stopped``)."""
        if item is None or (item.data.get(THINKING) != "live" and not text):
            return
        t0 = item.data.get(THINKING_T0)
        item.reasoning = text or "".join(item.data.pop(REASONING_PARTS, [])) or item.reasoning
        item.data.pop(REASONING_PARTS, None)
        item.reasoning_ms = elapsed_ms or (int((time.monotonic() - t0) * 1000) if t0 else item.reasoning_ms)
        item.data[THINKING] = state
        item.data.pop(THINKING_OPEN, None)
        block = self._thinking_block(item)
        if block is not None:
            if text and text != block.text:
                block.set_text(text)
            if state == "stopped":
                block.stop()
            else:
                block.finish(item.reasoning_ms)
        elif self.widget_of(item) is not None:
            self.item_changed(item)

    def _current_item(self, run_id: str) -> MessageItem:
        if self.current is None:
            self.current = MessageItem.of("assistant", "", status="streaming", run_id=run_id)
            self.append(self.current)
            self.pin(self.current)
        return self.current

    def add_message_decorator(self, decorate: MessageDecorator) -> Callable[[], None]:
        """Run ``decorate(widget)`` for every message widget, the live ones now and every one made later."""
        self._decorators.append(decorate)
        for item, widget in self.live_widgets():
            if isinstance(widget, MessageWidget):
                decorate(widget)
                self.changed(item)
        return lambda: self._decorators.remove(decorate) if decorate in self._decorators else None

    # --- items ----------------------------------------------------------------------------------
    def clear(self) -> None:
        self._todo.clear()
        self._stream.stop()
        self._ticker.stop()
        self.calls.clear()
        self._turn_calls.clear()
        self.current = None
        self._html.clear()
        self.set_items([])

    @property
    def messages(self) -> list[MessageItem]:
        return self.message_items()

    def message_items(self) -> list[MessageItem]:
        return [i for i in self.items if isinstance(i, MessageItem)]

    def notices(self) -> list[NoticeItem]:
        return [i for i in self.items if isinstance(i, NoticeItem)]

    def last_user_item(self) -> MessageItem | None:
        return next((i for i in reversed(self.items) if isinstance(i, MessageItem) and i.role == "user"), None)

    def widget_for(self, item: ChatItem, *, create: bool = True) -> QWidget | None:
        """The item's widget; with ``create`` it is made now if it does not exist (and dropped later when
        far from the screen, like any other)."""
        return self.materialize(item) if create else self.widget_of(item)

    def message_widget(self, item: MessageItem) -> MessageWidget:
        widget = self.materialize(item)
        assert isinstance(widget, MessageWidget)
        return widget

    def card(self, call_id: str) -> ToolCallCard:
        """The card of a call (made now if needed)."""
        widget = self.materialize(self.calls[call_id])
        assert isinstance(widget, ToolCallCard)
        return widget

    @property
    def cards(self) -> dict[str, ToolCallCard]:
        """Every call's card, made now (tests and small chats; large chats use :meth:`card`)."""
        return {cid: self.card(cid) for cid in self.calls}

    def add_message(self, role: str, text: str, **fields: object) -> MessageItem:
        item = MessageItem.of(role, text, **fields)
        self.append(item)
        return item

    def add_user(self, text: str) -> MessageItem:
        self.current = None
        self._stick = True
        return self.add_message("user", text)

    def add_notice(self, text: str | Text, kind: str = "info") -> NoticeItem:
        item = NoticeItem(message=text, kind=kind)
        self.append(item)
        return item

    def add_card(self, call: CallInfo) -> CallItem:
        item = CallItem(call=call)
        self.calls[call.call_id] = item
        self.append(item)
        return item

    def insert_item(self, index: int, item: ChatItem) -> None:
        self.insert(index, item)
        if isinstance(item, CallItem):
            self.calls[item.call.call_id] = item

    def remove_item(self, item: ChatItem) -> None:
        if isinstance(item, CallItem):
            self.calls.pop(item.call.call_id, None)
        self._html.pop(item.key, None)
        if item is self.current:
            self.current = None
        self.remove(item)

    def replace_text(self, item: MessageItem, text: str) -> None:
        """Show another text in a finished message (e.g. another branch)."""
        item.set_text(text)
        self._html.pop(item.key, None)
        widget = self.widget_of(item)
        if isinstance(widget, MessageWidget):
            widget.refresh()
        self.changed(item)

    def item_changed(self, item: ChatItem) -> None:
        """Something of ``item`` changed that its widget cannot update in place: make it again."""
        self._html.pop(item.key, None)
        if self.widget_of(item) is not None:
            self._drop(item.key)
        self.changed(item)

    @property
    def has_content(self) -> bool:
        return bool(self.items)

    # --- restoring a stored chat ----------------------------------------------------------------
    def load_transcript(self, transcript: Transcript, *, running_here: Iterable[str] = ()) -> None:
        """Show a stored chat as it was: messages, tool cards, notices and the marks of unfinished turns."""
        items, calls = transcript_items(transcript, running_here)
        self._stream.stop()
        self._ticker.stop()
        self.current = None
        self._turn_calls.clear()
        self._html.clear()
        self.calls = calls
        self.set_items(items)
        self._prerender()

    def load_history(self, items: Iterable[tuple[str, str]]) -> None:
        """Show plain (role, text) pairs; tool rows (role ``tool``) are skipped. Prefer :meth:`load_transcript`."""
        self.clear()
        self.set_items([MessageItem.of(r, t) for r, t in items if r in ("user", "assistant") and t.strip()])

    def refresh_phone_buttons(self) -> None:
        for _item, widget in self.live_widgets():
            if isinstance(widget, ToolCallCard):
                widget.refresh_phone()

    def restyle(self) -> None:
        """The theme changed: render everything on screen again in its colours."""
        self._renderer = markdown_renderer()
        self._html.clear()
        self._todo.clear()
        self._clear_pool()  # their documents carry the old palette's style sheet
        self._recycling = False  # nor may the widgets dropped now be rebound
        try:
            self.rebuild()
        finally:
            self._recycling = True
        self._prerender()

    # --- turn events ----------------------------------------------------------------------------
    def handle(self, event: ev.Event, call: CallInfo | None) -> None:
        """Render one turn event. ``call`` is the board's record of the call the event is about."""
        if isinstance(event, ev.TextDelta):
            current = self._current_item(event.run_id)
            if current.data.get(THINKING) == "live":
                self._end_thinking(current, "done")
            current.append(event.text)
            if not self._stream.isActive():
                self._stream.start()
        elif isinstance(event, ev.ReasoningDelta | ev.ReasoningRetracted):
            self._think(event)
        elif isinstance(event, ev.AssistantMessage):
            if event.reasoning and self.current is None:
                self._current_item(event.run_id).data[THINKING] = "done"
            self._end_thinking(self.current, "done", text=event.reasoning, elapsed_ms=event.reasoning_ms)
            self._close_current(event.text)
        elif isinstance(event, ev.ToolsWithheld):
            self.add_notice(Text("chat.tools_withheld", model=event.model), "warning")
        elif isinstance(event, ev.ToolCallRequested) and call is not None:
            self._end_thinking(self.current, "done")
            self._close_current(None)
            self.add_card(call)
            self._turn_calls.append(call.call_id)
            self._ticker.start()
        elif call is not None and call.call_id in self.calls:
            self._update_card(self.calls[call.call_id], call)
        elif isinstance(event, ev.ErrorOccurred):
            self._end_thinking(self.current, "stopped")
            self._close_current(None, status="partial")
            self._last_error = event.message
            self.add_notice(Text("chat.error", message=event.message), "error")
        elif isinstance(event, ev.TurnDone):
            self._end_thinking(self.current, "stopped")
            self._close_current(None, status="cancelled" if event.reason == "cancelled" else "complete")
            for call_id in self._turn_calls:  # this turn's cards only
                item = self.calls.get(call_id)
                if item is not None:
                    self._update_card(item, item.call)
            self._turn_calls.clear()
            self._ticker.stop()
            if event.reason == "cancelled":
                self.add_notice(Text("chat.stopped"), "warning")
            elif event.reason in ("max_rounds", "loop_guard"):
                self.add_notice(Text(f"chat.done.{event.reason}"), "warning")  # event.message is the log's
            elif event.reason in ("error", "budget") and event.message and event.message != self._last_error:
                self.add_notice(event.message, "error")
            self._last_error = ""

    def _update_card(self, item: CallItem, call: CallInfo) -> None:
        item.call = call
        widget = self.widget_of(item)
        if isinstance(widget, ToolCallCard):
            widget.update_from(call)

    def _render_stream(self) -> None:
        current = self.current
        if current is None:
            return
        widget = self.widget_of(current)
        if isinstance(widget, MessageWidget):
            widget.render_now()
        else:
            self.changed(current)  # not made yet (off screen): its estimate grew

    def _close_current(self, final_text: str | None, *, status: str = "complete") -> None:
        current = self.current
        self.current = None
        self._stream.stop()
        if current is None:
            if final_text and final_text.strip():
                self.add_message("assistant", final_text)
            return
        self.pin(current, False)
        replaced = final_text is not None and final_text != current.text  # differs when thinking was retracted
        if replaced and final_text is not None:
            current.set_text(final_text)
        if not current.text.strip() and not current.reasoning:
            self.remove_item(current)
            return
        current.status = status
        widget = self.widget_of(current)
        if isinstance(widget, MessageWidget):
            if replaced:
                widget.refresh()
            else:
                widget.finish()
        self.changed(current)

    def _tick(self) -> None:
        for item, widget in self.live_widgets():
            live = isinstance(item, CallItem) and item.call.status in ("running", "awaiting_approval")
            if live and isinstance(widget, ToolCallCard):
                widget.update_from(widget.call)
