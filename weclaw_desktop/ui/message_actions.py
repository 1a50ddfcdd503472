"""Message actions in the chat (#16 item 3), built on the chat view's per-message API (``ui/chat``).

Every message widget gets, through :meth:`ChatView.add_message_decorator`, a small action bar in its
``actions`` slot and, for a user message with files, its attachment chips in the ``chips`` slot:

- **Copy** on every message (an answer is copied as its Markdown; code blocks have their own copy link, see
  ``ui/markdown.py``);
- a user message: **Edit** (its text and files go back into the composer; sending makes a new version beside
  the old one, ``AgentRuntime.edit``), **Delete** (the exchange), and the pager **‹ 2/3 ›** through its
  versions when it has several;
- the last answer of an exchange: **Regenerate** (on the chat's last exchange; the old answer stays,
  ``AgentRuntime.regenerate``), **Delete** (the answer), the pager through the answers to the same text;
- an error notice at the end of the chat: **Retry** (``AgentRuntime.retry``).

What a widget shows comes from the item and from :attr:`MessageActions.infos` (the history's
:class:`BranchInfo` per turn of the active path), never from state kept in a widget: widgets are made again
while scrolling. Paging, deleting and a finished turn re-read the chat from the history (the active path is the
truth); nothing here blocks the UI thread (database work runs in the runtime's worker thread).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QSize, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMessageBox, QToolButton, QWidget

from weclaw_desktop.i18n import Text, tr
from weclaw_desktop.ui import icons, theme
from weclaw_desktop.ui.attachment_chips import ChipRow
from weclaw_desktop.ui.chat.items import MessageItem, NoticeItem
from weclaw_desktop.ui.chat.message_widget import REUSABLE, MessageWidget

if TYPE_CHECKING:
    from weclaw_desktop.agent.history_branches import BranchInfo
    from weclaw_desktop.agent.usage import UsageSum
    from weclaw_desktop.ui.chat_controller import ChatController
    from weclaw_desktop.ui.chat_view import ChatView
    from weclaw_desktop.ui.composer import Composer

log = logging.getLogger("weclaw.ui")

#: Keys of ``item.data`` this module sets (kept while the chat is open; widgets read them when made again).
LAST_OF_TURN = "actions_last_of_turn"  # the last answer of its exchange: the answer's actions go there
NOTICE_ACTION = "action"  # on an error notice: (label, handler), shown as a link by ui/chat/notice.py
SHOWN_ACTION = "actions_shown"  # the notice action its widget was made with
SIGNATURE = "actions_signature"  # what a message widget's bar was made from (see MessageActions._signature)


#: One part of an action bar, in order: ("button", name, icon, tip, handler) | ("pager", kind, index, count, step)
#: | ("stretch",) | ("usage", UsageSum).
Part = tuple[Any, ...]


def _shape(parts: list[Part]) -> tuple[str, ...]:
    """What a bar's widgets are, apart from their texts and handlers: a kept bar of the same shape is relabelled."""
    return tuple(f"{p[0]}:{p[1]}" if p[0] in ("button", "pager") else p[0] for p in parts)


class ActionBar(QWidget):
    """The row of small buttons under one message. Made from a list of parts; a rebound message widget keeps
    its bar aside (``REUSABLE``) and the decorator relabels it when the new message needs the same shape: the
    buttons call through ``handlers``, which are set again for every message."""

    def __init__(self, parts: list[Part], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("MessageActions")
        self.setProperty(REUSABLE, True)
        self.row = QHBoxLayout(self)
        self.row.setContentsMargins(0, 0, 0, 0)
        self.row.setSpacing(2)
        self.buttons: dict[str, QToolButton] = {}
        self.handlers: dict[str, Callable[[], None]] = {}
        self.pager: QLabel | None = None
        self.usage: QLabel | None = None
        self.shape = _shape(parts)
        for part in parts:
            kind = part[0]
            if kind == "button":
                self._button(part[1], part[2])
            elif kind == "pager":
                self._pager()
            elif kind == "stretch":
                self.row.addStretch(1)
            elif kind == "usage":
                self.usage = QLabel()
                self.usage.setObjectName("Muted")
                self.row.addWidget(self.usage)
        self.fill(parts)

    def fill(self, parts: list[Part]) -> None:
        """Show ``parts`` (of this bar's shape): tooltips, handlers, the pager's position, the usage."""
        for part in parts:
            kind = part[0]
            if kind == "button":
                _, name, _icon, tip, handler = part
                button = self.buttons[name]
                button.setToolTip(tip)
                button.setAccessibleName(tip)
                self.handlers[name] = handler
            elif kind == "pager":
                _, _kind, index, count, step = part
                self.buttons["previous"].setEnabled(index > 1)
                self.buttons["next"].setEnabled(index < count)
                self.handlers["previous"] = functools.partial(step, -1)
                self.handlers["next"] = functools.partial(step, +1)
                assert self.pager is not None
                self.pager.setText(f"{index}/{count}")
            elif kind == "usage":
                self._show_usage(part[1])

    def _button(self, name: str, icon: str) -> QToolButton:
        b = QToolButton()
        b.setObjectName(f"action-{name}")
        b.setAutoRaise(True)
        b.setIcon(icons.icon(icon, theme.colors().muted))
        b.setIconSize(QSize(14, 14))
        b.setCursor(Qt.CursorShape.PointingHandCursor)
        b.clicked.connect(functools.partial(self._clicked, name))
        self.row.addWidget(b)
        self.buttons[name] = b
        return b

    def _clicked(self, name: str, _checked: bool = False) -> None:
        handler = self.handlers.get(name)
        if handler is not None:
            handler()

    def _show_usage(self, used: UsageSum) -> None:
        """The exchange's tokens ("≈" when estimated) and, when every price is known, its cost."""
        from weclaw_desktop.agent.usage import format_cost, format_tokens

        text = tr(
            "actions.tokens",
            sent=format_tokens(used.prompt_tokens, used.estimated),
            received=format_tokens(used.completion_tokens, used.estimated),
        )
        cost = format_cost(used.cost)
        assert self.usage is not None
        self.usage.setText(f"{text} · {cost}" if cost else text)
        self.usage.setToolTip(tr("statusbar.usage.estimated") if used.estimated else "")

    def _pager(self) -> None:
        """‹ index/count ›: the buttons at either end do nothing."""
        for name, glyph in (("previous", "‹"), ("next", "›")):
            b = QToolButton()
            b.setObjectName(f"action-{name}")
            b.setText(glyph)
            b.setAutoRaise(True)
            b.setToolTip(tr(f"actions.{name}"))
            b.clicked.connect(functools.partial(self._clicked, name))
            self.buttons[name] = b
        self.pager = QLabel()
        self.pager.setObjectName("Muted")
        self.row.addWidget(self.buttons["previous"])
        self.row.addWidget(self.pager)
        self.row.addWidget(self.buttons["next"])


class MessageActions(QObject):
    """Decorates the chat's messages and carries out their actions through the controller."""

    def __init__(self, chat: ChatView, controller: ChatController, composer: Composer) -> None:
        super().__init__(controller)
        self.chat = chat
        self.controller = controller
        self.composer = composer
        self.infos: dict[str, BranchInfo] = {}
        self.usage: dict[str, UsageSum] = {}  # run id -> the tokens (and cost) of that exchange
        self.last_run = ""  # the chat's last exchange (regenerate is offered there)
        self.confirm: QMessageBox | None = None  # the open "Delete?" question (tests answer it)
        self.unsubscribe = chat.add_message_decorator(self.decorate)
        composer.edit_submitted.connect(self._edited)
        chat.edit_last_requested.connect(self.begin_edit)
        controller.turn_state_changed.connect(self._turn_state)
        controller.session_shown.connect(self._shown)

    # --- state ----------------------------------------------------------------------------------
    def _turn_state(self, running: bool) -> None:
        if not running:
            self.controller.spawn(self.refresh())

    def _shown(self, session_id: str) -> None:
        self.controller.spawn(self.refresh(session_id))

    async def refresh(self, session_id: str = "") -> None:
        """Read the branch positions (and the sent files) of the shown chat, then show them."""
        runtime = self.controller.runtime
        sid = session_id or self.controller.session_id
        if runtime is None or not sid:
            return
        infos = await runtime.branch_infos(sid)
        rows = await runtime.usage_rows(sid)
        users = [i for i in self.chat.message_items() if i.role == "user" and i.run_id and not i.attachments]
        files = await runtime.history.attachments.by_run(sid, [i.run_id for i in users]) if users else {}
        if sid != self.controller.session_id:
            return  # another chat was opened meanwhile
        self.infos = infos
        self.usage = _per_turn(rows, runtime.price_of)
        for item in users:
            item.attachments = list(files.get(item.run_id, []))
        self.mark()

    def mark(self) -> None:
        """One pass over the items: which answer ends each exchange, which notice can retry; then the widgets
        on screen are made again with their bars."""
        items = self.chat.items
        last_of: dict[str, MessageItem] = {}
        last_user: MessageItem | None = None
        for item in items:
            if isinstance(item, MessageItem):
                item.data.pop(LAST_OF_TURN, None)
                if item.role == "assistant" and item.run_id:
                    last_of[item.run_id] = item
                elif item.role == "user":
                    last_user = item
            elif isinstance(item, NoticeItem):
                item.data.pop(NOTICE_ACTION, None)
        for item in last_of.values():
            item.data[LAST_OF_TURN] = True
        self.last_run = last_user.run_id if last_user is not None else ""
        for item in reversed(items):  # an error after the last message can be retried
            if isinstance(item, MessageItem):
                break
            if isinstance(item, NoticeItem) and item.kind == "error" and self.last_run:
                item.data[NOTICE_ACTION] = (Text("actions.retry"), functools.partial(self.retry, self.last_run))
                break
        for item, widget in list(self.chat.live_widgets()):
            if isinstance(item, NoticeItem) and item.data.get(NOTICE_ACTION) != item.data.get(SHOWN_ACTION):
                item.data[SHOWN_ACTION] = item.data.get(NOTICE_ACTION)
                self.chat.item_changed(item)  # a one-line label: cheap to make again
            elif isinstance(item, MessageItem) and item.data.get(SIGNATURE) != self._signature(item):
                self._redecorate(widget)

    def _signature(self, item: MessageItem) -> tuple[Any, ...]:
        """Everything the bar and the chips of ``item`` depend on: a widget is re-decorated only when it changed."""
        info = self.infos.get(item.run_id)
        where = (info.edit_index, info.edit_count, info.answer_index, info.answer_count) if info else None
        last = bool(item.data.get(LAST_OF_TURN))
        return (
            item.streaming,
            item.run_id,
            where,
            last,
            item.run_id == self.last_run,
            self.busy,
            len(item.attachments),
            self.usage.get(item.run_id) if last else None,
        )

    def _redecorate(self, widget: QWidget) -> None:
        """Replace the bar and chips of a live message widget in place (no new render of its text)."""
        if not isinstance(widget, MessageWidget):
            return
        for old in (*widget.findChildren(ActionBar), *widget.findChildren(ChipRow)):
            old.hide()
            old.setParent(None)
            old.deleteLater()
        self.decorate(widget)

    @property
    def busy(self) -> bool:
        handle = self.controller.handle
        return handle is not None and handle.running

    # --- the decorator --------------------------------------------------------------------------
    def decorate(self, widget: MessageWidget) -> None:
        item = widget.item
        item.data[SIGNATURE] = self._signature(item)
        if item.role == "user" and item.attachments:
            widget.slot("chips").addWidget(ChipRow(list(item.attachments)))
        if item.streaming:
            return
        md = item.role == "assistant"
        parts: list[Part] = [
            (
                "button",
                "copy",
                "clipboard",
                tr("actions.copy_md" if md else "actions.copy"),
                lambda: copy_text(item.text),
            )
        ]
        info = self.infos.get(item.run_id)
        idle = not self.busy
        if item.role == "user" and item.run_id and idle:
            parts.append(("button", "edit", "edit", tr("actions.edit"), functools.partial(self.begin_edit, item)))
            if info is not None and info.edit_count > 1:
                step = functools.partial(self.page, item.run_id, "edit")
                parts.append(("pager", "edit", info.edit_index, info.edit_count, step))
            parts.append(
                ("button", "delete", "trash", tr("actions.delete_turn"), functools.partial(self.ask_delete, item))
            )
        elif md and item.run_id and item.data.get(LAST_OF_TURN) and idle:
            if item.run_id == self.last_run:
                regenerate = functools.partial(self.regenerate, item)
                parts.append(("button", "regenerate", "history", tr("actions.regenerate"), regenerate))
            if info is not None and info.answer_count > 1:
                step = functools.partial(self.page, item.run_id, "answer")
                parts.append(("pager", "answer", info.answer_index, info.answer_count, step))
            parts.append(
                ("button", "delete", "trash", tr("actions.delete_answer"), functools.partial(self.ask_delete, item))
            )
        used = self.usage.get(item.run_id) if md and item.data.get(LAST_OF_TURN) else None
        parts.append(("stretch",))
        if used is not None and used.total:
            parts.append(("usage", used))
        bar = widget.take_spare(ActionBar)  # the bar of the message this widget showed before
        if bar is not None and bar.shape == _shape(parts):
            bar.fill(parts)
        else:
            if bar is not None:  # another shape: a new bar (the old one is no child of the message any more)
                bar.setParent(None)
                bar.deleteLater()
            bar = ActionBar(parts)
        widget.slot("actions").addWidget(bar)
        bar.show()

    # --- actions --------------------------------------------------------------------------------
    def begin_edit(self, item: MessageItem) -> None:
        if item.role != "user" or not item.run_id or self.busy:
            return
        self.composer.begin_edit(item.run_id, item.text, list(item.attachments))

    def _edited(self, run_id: str, text: str, attachments: list[Any]) -> None:
        self.controller.spawn(self.resend(run_id, text, attachments))

    async def resend(self, run_id: str, text: str, attachments: list[Any]) -> Any:
        """The edited message as a new version: the chat shows it in place of the old one (and what followed)."""
        self._cut_from(self._user_item(run_id), keep=False)
        return await self.controller.branch_turn(
            text,
            attachments,
            lambda rt, sid, on_event: rt.edit(sid, run_id, text, attachments=attachments, on_event=on_event),
            reload_on_error=True,
        )

    def regenerate(self, item: MessageItem) -> None:
        if self.busy:
            return
        self.controller.spawn(self.regenerate_run(item.run_id))

    async def regenerate_run(self, run_id: str) -> Any:
        return await self._answer_again(run_id, lambda rt, sid, on_event: rt.regenerate(sid, run_id, on_event=on_event))

    def retry(self, run_id: str) -> None:
        self.controller.spawn(self.retry_run(run_id))

    async def retry_run(self, run_id: str) -> Any:
        return await self._answer_again(run_id, lambda rt, sid, on_event: rt.retry(sid, run_id, on_event=on_event))

    async def _answer_again(self, run_id: str, start: Callable[[Any, str, Any], Awaitable[Any]]) -> Any:
        """The user's message of ``run_id`` answered again (``start``: the runtime's regenerate or retry): what
        followed it leaves the screen, the message stays."""
        user = self._user_item(run_id)
        self._cut_from(user, keep=True)
        return await self.controller.branch_turn(
            None,
            [],
            start,
            user=user,
            reload_on_error=True,
        )

    def page(self, run_id: str, which: str, step: int) -> None:
        info = self.infos.get(run_id)
        target = None if info is None else (info.edit_target(step) if which == "edit" else info.answer_target(step))
        if target is not None and not self.busy:
            self.controller.spawn(self.select(target))

    async def select(self, run_id: str) -> None:
        runtime = await self.controller.ready()
        if await runtime.select_branch(self.controller.session_id, run_id):
            await self.controller.reload()

    def ask_delete(self, item: MessageItem) -> None:
        """Asks first (non-blocking); the answer deletes the exchange (a user message) or the answer."""
        if self.busy:
            return
        key = "actions.delete_turn.confirm" if item.role == "user" else "actions.delete_answer.confirm"
        box = QMessageBox(QMessageBox.Icon.Question, tr("actions.delete"), tr(key), parent=self.chat.window())
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.accepted.connect(lambda: self.controller.spawn(self.delete(item.role, item.run_id)))
        self.confirm = box
        box.open()

    async def delete(self, role: str, run_id: str) -> bool:
        runtime = await self.controller.ready()
        sid = self.controller.session_id
        done = await (runtime.delete_turn(sid, run_id) if role == "user" else runtime.delete_answer(sid, run_id))
        await self.controller.reload()
        return done

    # --- helpers --------------------------------------------------------------------------------
    def _user_item(self, run_id: str) -> MessageItem | None:
        return next((i for i in self.chat.message_items() if i.role == "user" and i.run_id == run_id), None)

    def _cut_from(self, user: MessageItem | None, *, keep: bool) -> None:
        """Take the exchange of ``user`` and everything after it off the screen (``keep``: the message stays)."""
        if user is None:
            return
        start = self.chat.index_of(user) + (1 if keep else 0)
        for item in list(self.chat.items[start:]):
            self.chat.remove_item(item)


def _per_turn(rows: list[Any], price: Callable[[Any], Any]) -> dict[str, UsageSum]:
    from weclaw_desktop.agent.usage import summarize

    by_run: dict[str, list[Any]] = {}
    for row in rows:
        by_run.setdefault(row.run_id, []).append(row)
    return {run: summarize(turn, price) for run, turn in by_run.items()}


def copy_text(text: str) -> None:
    clipboard = QGuiApplication.clipboard()
    if clipboard is not None:
        clipboard.setText(text)
