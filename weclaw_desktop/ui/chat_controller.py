"""Connects the chat widgets to the agent runtime: sessions, sending, Stop, events, tokens.

The runtime (``weclaw_desktop.agent.runtime.AgentRuntime``) is attached after the window is shown:
importing it pulls in the openai SDK, which would double the start-up time. Until it is attached,
sending waits for it and the sidebar is empty.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from weclaw_desktop.agent import events as ev
from weclaw_desktop.agent.transcript import load_transcript
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
    session_shown = Signal(str)  # a chat (or a new empty one) is now what the chat area shows

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
        composer.send_requested.connect(lambda text: self.spawn(self.send(text, pasted=composer.submitted_pasted)))
        composer.stop_requested.connect(self.stop)
        sidebar.new_requested.connect(lambda: self.spawn(self.new_session()))
        sidebar.selected.connect(lambda sid: self.spawn(self.open_session(sid)))
        sidebar.rename_requested.connect(lambda sid, title: self.spawn(self.rename(sid, title)))
        sidebar.delete_requested.connect(lambda sid: self.spawn(self.delete(sid)))
        sidebar.search_changed.connect(lambda q: self.spawn(self.refresh_sessions(q)))
        sidebar.more_requested.connect(lambda: self.spawn(self.more_sessions()))

    # --- tasks ----------------------------------------------------------------------------------
    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        return self._tasks.spawn(coro)

    async def idle(self) -> None:
        """Wait until the background UI tasks started so far are done (tests, shutdown)."""
        await self._tasks.idle()

    # --- runtime --------------------------------------------------------------------------------
    def attach(self, runtime: AgentRuntime) -> None:
        self.runtime = runtime
        self._ready.set()
        self.spawn(self._open_latest())

    async def ready(self) -> AgentRuntime:
        await self._ready.wait()
        assert self.runtime is not None
        return self.runtime

    async def _open_latest(self) -> None:
        """At start-up: show the latest chat with its content (loaded off the UI thread, so the window is
        usable meanwhile). Nothing is continued invisibly: the chat sent to is the chat shown."""
        runtime = await self.ready()
        sessions = await runtime.history.list_sessions(PAGE, 0)
        if sessions and not self.session_id:
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
    async def send(self, text: str, *, pasted: bool = False) -> TurnHandle | None:
        """Start a turn. ``pasted``: the text holds something pasted (untrusted content for the chat)."""
        if not self._is_configured():
            self._on_not_configured()
            self.composer.edit.setPlainText(text)
            return None
        runtime = await self.ready()
        if not self.session_id:
            info = await runtime.create_session()
            self.session_id = info.id
            self.board.reset_session()
            self.chat.clear()
        self.chat.add_user(text)
        self.board.set_exposed(set())
        self.composer.set_busy(True)
        self.turn_state_changed.emit(True)
        session_id = self.session_id
        try:
            handle = runtime.start_turn(
                session_id, text, on_event=lambda e: self._on_event(session_id, e), pasted=pasted
            )
        except Exception as exc:  # TurnInProgress and the like: say it, keep the text
            self.composer.set_busy(False)
            self.turn_state_changed.emit(False)
            self.chat.add_notice(str(exc), "error")
            return None
        self.handle = handle
        handle.task.add_done_callback(lambda _t: self._turn_finished(handle))
        self.spawn(self.refresh_sessions())
        return handle

    def stop(self) -> None:
        if self.handle is not None and self.handle.running:
            self.handle.cancel()

    def _on_event(self, session_id: str, event: ev.Event) -> None:
        if isinstance(event, ev.UsageReported):
            self.tokens[session_id] = self.tokens.get(session_id, 0) + event.total_tokens
            if session_id == self.session_id:
                self.tokens_changed.emit(self.tokens[session_id])
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
