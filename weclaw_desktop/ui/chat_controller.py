"""Connects the chat widgets to the agent runtime: sessions, sending (with attachments), Stop, events, tokens,
and the turns of the message actions (edit, regenerate, retry: :meth:`ChatController.branch_turn`).

The runtime (``weclaw_desktop.agent.runtime.AgentRuntime``) is attached after the window is shown:
importing it pulls in the openai SDK, which would double the start-up time. Until it is attached,
sending waits for it and the sidebar is empty.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from weclaw_desktop.agent import events as ev
from weclaw_desktop.agent.transcript import load_transcript
from weclaw_desktop.attachments import Attachment
from weclaw_desktop.i18n import Text
from weclaw_desktop.ui.chat_view import ChatView
from weclaw_desktop.ui.composer import Composer
from weclaw_desktop.ui.sessions_sidebar import SessionsSidebar
from weclaw_desktop.ui.tasks import TaskSet
from weclaw_desktop.ui.tool_board import ToolBoard

#: Chats per sidebar page (the sidebar asks for the next page when scrolled to its end).
PAGE = 100

if TYPE_CHECKING:
    from weclaw_desktop.agent.runtime import AgentRuntime, TurnHandle

log = logging.getLogger("weclaw.ui")


class ChatController(QObject):
    tokens_changed = Signal(int)
    turn_state_changed = Signal(bool)  # running
    event_received = Signal(object)  # every turn event, after the widgets handled it
    session_shown = Signal(str)  # a chat (or a new empty one) is now what the chat area shows ('' = none)
    usage_reported = Signal(str)  # a request of this session reported (or estimated) its tokens

    def __init__(
        self,
        chat: ChatView,
        composer: Composer,
        sidebar: SessionsSidebar,
        board: ToolBoard,
        *,
        is_configured: Callable[[], bool],
        on_not_configured: Callable[[], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.chat = chat
        self.composer = composer
        self.sidebar = sidebar
        self.board = board
        self._is_configured = is_configured
        self._on_not_configured = on_not_configured
        self.runtime: AgentRuntime | None = None
        self._ready = asyncio.Event()
        self.session_id = ""
        self.handle: TurnHandle | None = None
        self.tokens: dict[str, int] = {}
        self._tasks = TaskSet("UI", on_error=lambda exc: self.chat.add_notice(_error_text(exc), "error"))
        self._query = ""
        self._opening = ""
        #: The composer's chat-setup pickers (ui/chat_setup_ui.py), set by the window; None in bare tests.
        self.setup_ui: Any = None
        self._creating = False  # a chat is being made for the first message
        self.turns_started = 0  # turns started from this window (tests wait on it)
        composer.send_requested.connect(
            lambda text, atts: self.spawn(self.send(text, atts, pasted=composer.submitted_pasted))
        )
        composer.stop_requested.connect(self.stop)
        sidebar.new_requested.connect(lambda: self.spawn(self.new_session()))
        sidebar.selected.connect(lambda sid: self.spawn(self.open_session(sid)))
        sidebar.rename_requested.connect(lambda sid, title: self.spawn(self.rename(sid, title)))
        sidebar.delete_requested.connect(lambda sid: self.spawn(self.delete(sid)))
        sidebar.search_changed.connect(lambda q: self.spawn(self.refresh_sessions(q)))
        sidebar.more_requested.connect(lambda: self.spawn(self.more_sessions()))

    @property
    def query(self) -> str:
        """What the sidebar is searching for ('' when it lists every chat)."""
        return self._query

    # --- tasks ----------------------------------------------------------------------------------
    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        return self._tasks.spawn(coro)

    async def idle(self) -> None:
        """Wait until the background UI tasks started so far are done (tests, shutdown)."""
        await self._tasks.idle()

    # --- runtime --------------------------------------------------------------------------------
    def attach(self, runtime: AgentRuntime) -> None:
        self.runtime = runtime
        self.composer.attachment_dir = runtime.attachment_dir()
        runtime.title_listeners.append(self._titled)
        self._ready.set()
        self.spawn(self._open_latest())

    def _titled(self, _session_id: str, _title: str) -> None:
        self.spawn(self.refresh_sessions())

    async def ready(self) -> AgentRuntime:
        await self._ready.wait()
        assert self.runtime is not None
        return self.runtime

    async def _open_latest(self) -> None:
        """At start-up: show the latest chat with its content (loaded off the UI thread, so the window is
        usable meanwhile). Nothing is continued invisibly: the chat sent to is the chat shown."""
        runtime = await self.ready()
        sessions = await runtime.history.list_sessions(PAGE, 0)
        if sessions and not self.session_id and not self._creating:  # the user's first message may be on its way
            await self.open_session(sessions[0].id)
        self.sidebar.set_sessions(sessions, self.session_id, more=len(sessions) == PAGE)

    # --- sessions -------------------------------------------------------------------------------
    async def refresh_sessions(self, query: str | None = None) -> None:
        runtime = await self.ready()
        if query is not None:
            self._query = query
        if self._query:
            hits = await runtime.search(self._query, limit=50)
            seen: dict[str, Any] = {}
            for hit in hits:
                seen.setdefault(hit.session_id, _Hit(hit.session_id, hit.title, hit.created_at, hit.snippet))
            self.sidebar.set_sessions(list(seen.values()), self.session_id, searching=True)
        else:
            shown = max(PAGE, self.sidebar.count())  # keep the pages the user has scrolled through
            sessions = await runtime.history.list_sessions(shown, 0)
            self.sidebar.set_sessions(sessions, self.session_id, more=len(sessions) == shown)

    async def more_sessions(self) -> None:
        """The next page of chats (the sidebar was scrolled to its end)."""
        runtime = await self.ready()
        if self._query:
            return
        page = await runtime.history.list_sessions(PAGE, self.sidebar.count())
        self.sidebar.add_sessions(page, more=len(page) == PAGE)

    async def new_session(self) -> str:
        runtime = await self.ready()
        info = await runtime.create_session()
        self._show_session(info.id, [])
        await self.refresh_sessions("")
        self.sidebar.search.clear()
        return info.id

    async def open_session(self, session_id: str) -> None:
        """Show a stored chat as it was: messages, tool cards, notices, stopped and unfinished marks."""
        runtime = await self.ready()
        self._opening = session_id
        transcript = await load_transcript(runtime.db, session_id)  # off the UI thread; reasoning included
        if self._opening != session_id:
            return  # another chat was chosen meanwhile
        running = runtime.running_turn(session_id)
        self.session_id = session_id
        self.sidebar.set_current(session_id)
        self.board.reset_session()
        self.chat.load_transcript(transcript, running_here=[running.run_id] if running is not None else [])
        self.tokens_changed.emit(self.tokens.get(session_id, 0))
        self.handle = running
        self.composer.set_busy(running is not None)
        self.session_shown.emit(session_id)

    async def reload(self) -> None:
        """Show the open chat again from the history (its active branch changed: paging, a deletion)."""
        if self.session_id:
            await self.open_session(self.session_id)

    def _show_session(self, session_id: str, items: list[tuple[str, str]]) -> None:
        self._opening = session_id
        self.session_id = session_id
        self.sidebar.set_current(session_id)
        self.board.reset_session()
        self.chat.load_history(items)
        self.tokens_changed.emit(self.tokens.get(session_id, 0))
        self.session_shown.emit(session_id)

    async def rename(self, session_id: str, title: str) -> None:
        runtime = await self.ready()
        await runtime.rename_session(session_id, title)
        await self.refresh_sessions()

    async def delete(self, session_id: str) -> None:
        runtime = await self.ready()
        await runtime.delete_session(session_id)
        if session_id == self.session_id:
            self.session_id = ""
            self.handle = None
            self.composer.set_busy(False)
            self.chat.clear()
            self.board.reset_session()
            self.session_shown.emit("")
        await self.refresh_sessions()

    # --- turns ----------------------------------------------------------------------------------
    async def send(
        self, text: str, attachments: Sequence[Attachment] = (), *, pasted: bool = False
    ) -> TurnHandle | None:
        """Start a turn. ``pasted``: the text holds something pasted (untrusted content for the chat)."""
        if not self._is_configured():
            self._on_not_configured()
            self._give_back(text, attachments)
            return None
        runtime = await self.ready()
        from weclaw_desktop.agent.runtime_chats import ImagesRefused

        try:  # an image for a model that cannot see: say so before anything is stored or sent
            await runtime.check_attachments(self.session_id, attachments) if self.session_id else None
            if not self.session_id and self.setup_ui is not None and attachments:
                await self._check_pending(runtime, attachments)
        except ImagesRefused as exc:
            self.chat.add_notice(Text("chat.error", message=str(exc)), "error")
            self._give_back(text, attachments)
            return None
        if not self.session_id:
            assistant = self.setup_ui.new_chat_assistant() if self.setup_ui is not None else ""
            self._creating = True  # opening the latest chat at start-up must not replace this one
            try:
                info = await runtime.create_session(assistant=assistant)
            finally:
                self._creating = False
            self.session_id = info.id
            self._opening = info.id
            if self.setup_ui is not None:
                await self.setup_ui.apply_pending(runtime, info.id)
            self.board.reset_session()
            self.chat.clear()
            self.session_shown.emit(info.id)

        def start(rt: AgentRuntime, sid: str, on_event: Callable[[ev.Event], None]) -> Awaitable[TurnHandle]:
            async def now() -> TurnHandle:
                return rt.start_turn(sid, text, on_event=on_event, attachments=attachments, pasted=pasted)

            return now()

        return await self.branch_turn(text, attachments, start)

    async def branch_turn(
        self,
        text: str | None,
        attachments: Sequence[Attachment],
        start: Callable[[AgentRuntime, str, Callable[[ev.Event], None]], Awaitable[TurnHandle]],
        *,
        user: Any = None,
        reload_on_error: bool = False,
    ) -> TurnHandle | None:
        """Run a turn of the open chat that ``start(runtime, session_id, on_event)`` begins (a new message, an
        edit, a regeneration, a retry). ``text``: the user message shown for it (None: ``user``, the message
        already shown, answers again). ``reload_on_error``: when the turn cannot start, show the chat as the
        history has it again (an edit or a regeneration took messages off the screen first)."""
        runtime = await self.ready()
        if text is not None:
            user = self.chat.add_user(text)
            user.attachments = list(attachments)
        self.board.set_exposed(set())
        self.composer.set_busy(True)
        self.turn_state_changed.emit(True)
        session_id = self.session_id
        try:
            handle = await start(runtime, session_id, lambda e: self._on_event(session_id, e))
        except Exception as exc:  # TurnInProgress and the like: say it, keep the text
            self.composer.set_busy(False)
            self.turn_state_changed.emit(False)
            if reload_on_error:
                await self.reload()
            self.chat.add_notice(Text("chat.error", message=str(exc)) if reload_on_error else str(exc), "error")
            return None
        if user is not None:
            user.run_id = handle.run_id  # the message actions act on its turn
            self.chat.item_changed(user)
        self.handle = handle
        self.turns_started += 1
        handle.task.add_done_callback(lambda _t: self._turn_finished(handle))
        self.spawn(self.refresh_sessions())
        return handle

    def _give_back(self, text: str, attachments: Sequence[Attachment]) -> None:
        """A message that was not sent: its text and files go back into the composer."""
        self.composer.edit.setPlainText(text)
        self.composer.restore(list(attachments))

    async def _check_pending(self, runtime: AgentRuntime, attachments: Sequence[Attachment]) -> None:
        """Images for the model picked for a chat that does not exist yet."""
        from weclaw_desktop.agent.runtime_chats import ImagesRefused

        pending = self.setup_ui.pending
        assistant = runtime.settings.assistants.resolve(pending.get("assistant", ""))
        entry = runtime.provider_entry(pending.get("provider") or assistant.provider)
        model = pending.get("model") or assistant.model or entry.model
        caps = await runtime.capabilities(entry, model)
        images = [a.name for a in attachments if a.is_image]
        if images and caps.vision is False:
            raise ImagesRefused(
                f"The model {model} cannot see images, so {', '.join(images)} was not sent. Choose a model that "
                "accepts images in the model switcher, or remove the image."
            )

    def stop(self) -> None:
        if self.handle is not None and self.handle.running:
            self.handle.cancel()

    def _on_event(self, session_id: str, event: ev.Event) -> None:
        if isinstance(event, ev.UsageReported):
            self.tokens[session_id] = self.tokens.get(session_id, 0) + event.total_tokens
            if session_id == self.session_id:
                self.tokens_changed.emit(self.tokens[session_id])
            self.usage_reported.emit(session_id)
        if session_id != self.session_id:
            return  # a turn of a chat that is not shown; it is stored and shown when opened
        if isinstance(event, ev.TextDelta | ev.ReasoningDelta):  # the hot path: one per token, no signal emission
            self.chat.handle(event, None)
            return
        call = self.board.handle(event)
        self.chat.handle(event, call)
        self.event_received.emit(event)

    def _turn_finished(self, handle: TurnHandle) -> None:
        if handle.done_event is None and handle.session_id == self.session_id:
            # the turn ended without TurnDone (cancelled before it began): close the view's state
            with contextlib.suppress(Exception):
                self._on_event(
                    handle.session_id,
                    ev.TurnDone(run_id=handle.run_id, session_id=handle.session_id, reason="cancelled"),
                )
        if self.handle is handle:
            self.handle = None
            self.composer.set_busy(False)
            self.turn_state_changed.emit(False)
        self.spawn(self.refresh_sessions())

    async def shutdown(self) -> None:
        await self._tasks.cancel_all()
        if self.runtime is not None:
            await self.runtime.close()


def _error_text(exc: BaseException) -> Text:
    """A failed background task for the user: a storage fault or a busy conversation in its own words."""
    from weclaw_desktop.agent.history import SessionBusy
    from weclaw_desktop.storage.faults import StorageError

    if isinstance(exc, StorageError | SessionBusy):
        return Text("chat.error", message=str(exc))
    return Text("chat.error", message=f"{type(exc).__name__}: {exc}")


class _Hit:
    """A search result shown in the sidebar like a session."""

    def __init__(self, session_id: str, title: str, at: float, snippet: str) -> None:
        self.id = session_id
        self.title = title
        self.updated_at = at
        self.snippet = snippet
