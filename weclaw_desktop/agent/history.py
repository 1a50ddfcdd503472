"""Conversation history in SQLite (``weclaw.db``): sessions, turns, messages and tool calls.

Every write is its own committed transaction, and the loop awaits it before the next round starts, so a
process killed mid-turn loses at most the round in flight. :meth:`HistoryStore.messages_for_model`
repairs what a crash can leave behind (an assistant message whose tool calls never got results) so the
session always resumes with a request the endpoint accepts.

All methods are async and run their SQLite work in a worker thread (``Database.run``).

Crash-only rules kept here:

- **Running rows.** The tool calls of an assistant message are recorded (status ``running``) in the same
  transaction as the message, before any of them starts; their result updates the row. A process killed
  mid-call leaves the row ``running``; recovery closes it as ``interrupted`` (and the audit rows of that
  turn, through :meth:`HistoryStore.on_abandoned`), so every call that may have run is on record.
- **One writer per session.** A turn holds the session's cross-process lock (``storage/locks.py``) from
  :meth:`HistoryStore.begin_turn` to :meth:`HistoryStore.finish_turn`. A second process (or runtime)
  starting a turn in a session whose turn runs elsewhere gets :class:`SessionBusy`, never an interleaved
  history. The OS drops the lock of a killed process, so "running, and nobody holds the lock" is exactly
  "abandoned": recovery needs no pid guessing.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from weclaw_desktop.agent import history_calls, history_conversation, history_reasoning
from weclaw_desktop.agent.chat_setup import ChatSetups
from weclaw_desktop.agent.history_attachments import AttachmentRows
from weclaw_desktop.agent.history_branches import Branches
from weclaw_desktop.agent.history_calls import CALLS_COMPONENT
from weclaw_desktop.agent.history_conversation import CONVERSATION_COMPONENT
from weclaw_desktop.agent.history_reasoning import REASONING_COMPONENT, parse_meta
from weclaw_desktop.agent.history_schema import COMPONENT  # registers the base schema first
from weclaw_desktop.agent.model_messages import INTERRUPTED_RESULT, StoredMessage, build_model_messages
from weclaw_desktop.agent.usage import UsageRows
from weclaw_desktop.i18n import Text
from weclaw_desktop.storage.db import Database
from weclaw_desktop.storage.faults import StorageError
from weclaw_desktop.storage.locks import NamedLocks, lock_file_for
from weclaw_desktop.toolkit.redact import redact

log = logging.getLogger("weclaw.history")

__all__ = [
    "INTERRUPTED_RESULT",
    "HistoryStore",
    "SearchHit",
    "SessionBusy",
    "SessionInfo",
    "StoredMessage",
    "StoredToolCall",
    "build_model_messages",
]

history_reasoning.register()
history_conversation.register()  # branches, chat setup, attachments, usage: after the base schema
history_calls.register()  # tool_calls.waited_ms

INTERRUPTED_TURN = "this turn did not finish: the app stopped, or its end could not be saved"
RUNNING = "running"
INTERRUPTED = "interrupted"

#: Called inside the recovery transaction with the run ids of abandoned turns (the audit closes its rows).
AbandonedHook = Callable[[sqlite3.Connection, list[str]], None]


class SessionBusy(RuntimeError):
    """A turn of this conversation is running in another process (or another runtime of this one)."""

    def __init__(self, session_id: str, pid: int = 0) -> None:
        self.session_id = session_id
        self.pid = pid
        elsewhere = bool(pid) and pid != os.getpid()
        self.text = Text("chat.busy_process", pid=pid) if elsewhere else Text("chat.busy_window")
        super().__init__(str(self.text))


@dataclass(frozen=True)
class SessionInfo:
    id: str
    title: str
    created_at: float
    updated_at: float
    model: str = ""
    message_count: int = 0


@dataclass(frozen=True)
class StoredToolCall:
    call_id: str
    run_id: str
    function: str
    tool: str
    action: str
    arguments: str
    status: str
    output: str
    error: str
    files: list[str]
    duration_ms: float
    truncated: bool
    waited_ms: float | None = None  # of duration_ms, the wait for the user's approval (None: not known)


@dataclass(frozen=True)
class SearchHit:
    session_id: str
    title: str
    message_id: int
    role: str
    snippet: str
    created_at: float


def new_id() -> str:
    return uuid.uuid4().hex[:16]


def _lock_name(session_id: str) -> str:
    return f"session:{session_id}"


class HistoryStore:
    def __init__(self, db: Database) -> None:
        self.db = db
        db.ensure(COMPONENT)
        db.ensure(REASONING_COMPONENT)  # after the base schema: it adds columns to its messages table
        db.ensure(CONVERSATION_COMPONENT)
        db.ensure(CALLS_COMPONENT)
        self.branches = Branches(db)  # edits/regenerations; messages() returns the active branch
        self.chats = ChatSetups(db)  # per-chat provider, model, assistant, instructions, title source
        self.attachments = AttachmentRows(db)
        self.usage = UsageRows(db)
        self.locks = NamedLocks(lock_file_for(db.path))
        self._turn_sessions: dict[str, str] = {}  # run id -> session id, for turns holding the lock
        self._unfinished: dict[str, tuple[str, int, str]] = {}  # finish_turn writes that failed (disk full)
        self._abandoned_hooks: list[AbandonedHook] = []

    def on_abandoned(self, hook: AbandonedHook) -> None:
        """Also run ``hook(conn, run_ids)`` when recovery closes abandoned turns (same transaction)."""
        self._abandoned_hooks.append(hook)

    # --- sessions ---------------------------------------------------------------------------------
    async def create_session(self, title: str = "", *, model: str = "", origin: str = "") -> SessionInfo:
        sid, now = new_id(), time.time()
        await self.db.run(
            self.db.execute,
            "INSERT INTO sessions(id, title, created_at, updated_at, model, origin) VALUES(?,?,?,?,?,?)",
            (sid, title, now, now, model, origin),
        )
        return SessionInfo(sid, title, now, now, model)

    async def get_session(self, session_id: str) -> SessionInfo | None:
        rows = await self.db.run(self.db.query, _SESSION_SQL + " WHERE s.id=? GROUP BY s.id", (session_id,))
        return _session(rows[0]) if rows else None

    async def list_sessions(self, limit: int = 200, offset: int = 0) -> list[SessionInfo]:
        rows = await self.db.run(
            self.db.query,
            _SESSION_SQL + " GROUP BY s.id ORDER BY s.updated_at DESC LIMIT ? OFFSET ?",
            (limit, offset),
        )
        return [_session(r) for r in rows]

    async def latest_session(self) -> SessionInfo | None:
        sessions = await self.list_sessions(limit=1)
        return sessions[0] if sessions else None

    async def rename_session(self, session_id: str, title: str) -> bool:
        title = " ".join(title.split())[:200]
        return bool(
            await self.db.run(
                self._changes, "UPDATE sessions SET title=?, updated_at=? WHERE id=?", (title, time.time(), session_id)
            )
        )

    async def delete_session(self, session_id: str) -> bool:
        """Delete a conversation; :class:`SessionBusy` while a turn of it runs in another process."""
        if await self.busy_elsewhere(session_id) is not None:
            raise SessionBusy(session_id, await self._running_pid(session_id))
        return bool(await self.db.run(self._changes, "DELETE FROM sessions WHERE id=?", (session_id,)))

    async def busy_elsewhere(self, session_id: str) -> int | None:
        """The pid of the process whose turn holds ``session_id`` now (0 if unknown), or None when free.

        A turn of this store does not count (another runtime of this process does)."""
        if session_id in self._turn_sessions.values() or self.locks.is_free(_lock_name(session_id)):
            return None
        return await self._running_pid(session_id)

    async def _running_pid(self, session_id: str) -> int:
        rows = await self.db.run(
            self.db.query,
            "SELECT pid FROM turns WHERE session_id=? AND status='running' ORDER BY started_at DESC LIMIT 1",
            (session_id,),
        )
        return int(rows[0]["pid"]) if rows else 0

    def _changes(self, sql: str, params: tuple[Any, ...]) -> int:
        with self.db.transaction() as conn:
            return conn.execute(sql, params).rowcount

    async def search(self, query: str, limit: int = 20) -> list[SearchHit]:
        """Messages (user and assistant) containing every word of ``query``, newest first.

        Substring matching (LIKE) works for Chinese, which has no spaces between words.
        """
        terms = [t for t in query.split() if t][:8]
        if not terms:
            return []
        where = " AND ".join("m.content LIKE ? ESCAPE '\\'" for _ in terms)
        params: list[Any] = [f"%{_escape_like(t)}%" for t in terms]
        sql = (
            "SELECT m.id, m.session_id, m.role, m.content, m.created_at, s.title FROM messages m "
            "JOIN sessions s ON s.id = m.session_id "
            f"WHERE m.role IN ('user', 'assistant') AND {where} ORDER BY m.id DESC LIMIT ?"
        )
        rows = await self.db.run(self.db.query, sql, (*params, max(1, min(limit, 200))))
        return [
            SearchHit(
                r["session_id"], r["title"], r["id"], r["role"], _snippet(r["content"], terms[0]), r["created_at"]
            )
            for r in rows
        ]

    # --- turns ------------------------------------------------------------------------------------
    async def begin_turn(self, session_id: str, run_id: str, user_text: str) -> int:
        """Take the session (one writer), record the start of a turn and the user's message (durable).

        Returns the message id. :class:`SessionBusy` when a turn of the session runs elsewhere; a turn of
        the session left ``running`` by a process that died is closed as interrupted first.
        """
        name = _lock_name(session_id)
        if not self.locks.acquire(name):
            raise SessionBusy(session_id, await self._running_pid(session_id))
        self._turn_sessions[run_id] = session_id
        try:
            return await self.db.run(self._begin_turn, session_id, run_id, user_text)
        except BaseException:
            self.release_turn(run_id)
            raise

    def _begin_turn(self, session_id: str, run_id: str, user_text: str) -> int:
        now = time.time()
        with self.db.transaction() as conn:
            row = conn.execute("SELECT title FROM sessions WHERE id=?", (session_id,)).fetchone()
            if row is None:
                raise KeyError(f"no session {session_id}")
            # we hold the session: any turn of it still 'running' was abandoned (or could not be closed)
            stale = [
                str(r["run_id"])
                for r in conn.execute(
                    "SELECT run_id FROM turns WHERE session_id=? AND status='running'", (session_id,)
                ).fetchall()
            ]
            if stale:
                self._close_abandoned(conn, stale)
            if not row["title"]:
                conn.execute("UPDATE sessions SET title=? WHERE id=?", (_title_from(user_text), session_id))
            conn.execute("UPDATE sessions SET updated_at=? WHERE id=?", (now, session_id))
            conn.execute(
                "INSERT INTO turns(run_id, session_id, started_at, pid) VALUES(?,?,?,?)",
                (run_id, session_id, now, os.getpid()),
            )
            cur = conn.execute(
                "INSERT INTO messages(session_id, run_id, role, content, created_at) VALUES(?,?,?,?,?)",
                (session_id, run_id, "user", user_text, now),
            )
            return int(cur.lastrowid or 0)

    async def finish_turn(self, run_id: str, status: str, rounds: int, message: str = "") -> None:
        """Record how the turn ended and give the session back. A failed write (disk full) is kept and
        applied when the session is next recovered, instead of showing the turn as interrupted."""
        try:
            await self.db.run(
                self.db.execute,
                "UPDATE turns SET status=?, rounds=?, finished_at=?, message=? WHERE run_id=?",
                (status, rounds, time.time(), message, run_id),
            )
            self._unfinished.pop(run_id, None)
        except StorageError:
            self._unfinished[run_id] = (status, rounds, message)
            raise
        finally:
            self.release_turn(run_id)

    def release_turn(self, run_id: str) -> None:
        """Give the session of ``run_id`` back (idempotent; finish_turn does it)."""
        session_id = self._turn_sessions.pop(run_id, None)
        if session_id is not None and session_id not in self._turn_sessions.values():
            self.locks.release(_lock_name(session_id))

    def _close_abandoned(self, conn: sqlite3.Connection, run_ids: list[str]) -> None:
        now = time.time()
        for run_id in run_ids:
            status, rounds, message = self._unfinished.pop(run_id, (INTERRUPTED, -1, INTERRUPTED_TURN))
            conn.execute(
                "UPDATE turns SET status=?, finished_at=?, message=?, "
                "rounds=CASE WHEN ? < 0 THEN rounds ELSE ? END WHERE run_id=?",
                (status, now, message, rounds, rounds, run_id),
            )
        marks = ",".join("?" for _ in run_ids)
        conn.execute(
            f"UPDATE tool_calls SET status=?, error=? WHERE status=? AND run_id IN ({marks})",
            (INTERRUPTED, INTERRUPTED_RESULT, RUNNING, *run_ids),
        )
        for hook in self._abandoned_hooks:
            hook(conn, run_ids)

    async def turn_status(self, run_id: str) -> str | None:
        rows = await self.db.run(self.db.query, "SELECT status FROM turns WHERE run_id=?", (run_id,))
        return str(rows[0]["status"]) if rows else None

    async def mark_abandoned_turns(self) -> int:
        """Turns left 'running' that nobody runs any more become 'interrupted', with their running calls.

        A turn is abandoned when no process holds its session (the OS dropped the lock of a process that
        died) and it is not one of this process's own running turns.
        """
        rows = await self.db.run(
            self.db.query, "SELECT run_id, session_id, pid, started_at FROM turns WHERE status='running'"
        )
        dead = [
            str(r["run_id"])
            for r in rows
            if r["run_id"] not in self._turn_sessions
            and self.locks.is_free(_lock_name(r["session_id"]))
            and not _old_writer_alive(int(r["pid"]), float(r["started_at"]))
        ]
        if dead:
            await self.db.run(self._recover, dead)
        return len(dead)

    def _recover(self, run_ids: list[str]) -> None:
        with self.db.transaction() as conn:
            self._close_abandoned(conn, run_ids)

    # --- messages ---------------------------------------------------------------------------------
    async def add_assistant(
        self,
        session_id: str,
        run_id: str,
        round_no: int,
        text: str,
        tool_calls: list[dict[str, Any]],
        *,
        status: str = "complete",
        refs: Mapping[str, tuple[str, str]] | None = None,
        reasoning: str = "",
        meta: dict[str, Any] | None = None,
    ) -> int:
        """The assistant message, and a ``running`` tool-call row for each of its calls (one transaction).

        ``refs``: call id -> (tool, action) for the calls whose function is known. ``reasoning`` and ``meta``
        (a message's ``_meta`` without the reasoning text) are kept with it, so a resumed session sends what the
        endpoint requires back (agent/history_reasoning.py).
        """
        calls = json.dumps(tool_calls, ensure_ascii=False) if tool_calls else None
        extra = {k: v for k, v in (meta or {}).items() if k != "reasoning"}
        thought = (reasoning, json.dumps(extra, ensure_ascii=False) if extra else None)
        return await self.db.run(
            self._insert_assistant,
            (session_id, run_id, round_no, text, calls, status, *thought),
            tool_calls,
            dict(refs or {}),
        )

    def _insert_assistant(
        self, head: tuple[Any, ...], tool_calls: list[dict[str, Any]], refs: dict[str, tuple[str, str]]
    ) -> int:
        session_id, run_id, round_no, text, calls, status, reasoning, meta = head
        now = time.time()
        with self.db.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO messages(session_id, run_id, round, role, content, tool_calls, tool_call_id, status, "
                "created_at, reasoning, meta) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
                (session_id, run_id, round_no, "assistant", text, calls, None, status, now, reasoning, meta),
            )
            for c in tool_calls:
                fn = c.get("function") or {}
                tool, action = refs.get(str(c.get("id", "")), ("", ""))
                conn.execute(
                    "INSERT INTO tool_calls(session_id, run_id, round, call_id, function, tool, action, arguments, "
                    "status, created_at) VALUES(?,?,?,?,?,?,?,?,?,?)",
                    (
                        session_id,
                        run_id,
                        round_no,
                        str(c.get("id", "")),
                        str(fn.get("name", "")),
                        tool,
                        action,
                        redact(str(fn.get("arguments", ""))),
                        RUNNING,
                        now,
                    ),
                )
            conn.execute("UPDATE sessions SET updated_at=? WHERE id=?", (now, session_id))
            return int(cur.lastrowid or 0)

    async def add_tool_result(
        self,
        session_id: str,
        run_id: str,
        round_no: int,
        *,
        call_id: str,
        function: str,
        tool: str,
        action: str,
        arguments: str,
        status: str,
        output: str,
        error: str = "",
        files: list[str] | None = None,
        duration_ms: float = 0.0,
        truncated: bool = False,
        waited_ms: float | None = None,
    ) -> None:
        """The tool message the model reads and the tool-call record, in one transaction. ``waited_ms``: the part
        of ``duration_ms`` spent waiting for the user's approval (None: not known)."""
        await self.db.run(
            self._tool_result,
            (session_id, run_id, round_no, call_id, function, tool, action, redact(arguments), status),
            (
                redact(output),
                redact(error),
                json.dumps(files or [], ensure_ascii=False),
                duration_ms,
                int(truncated),
                waited_ms,
            ),
        )

    def _tool_result(self, head: tuple[Any, ...], tail: tuple[Any, ...]) -> None:
        session_id, run_id, round_no, call_id = head[:4]
        output = tail[0]
        now = time.time()
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO messages(session_id, run_id, round, role, content, tool_call_id, created_at) "
                "VALUES(?,?,?,?,?,?,?)",
                (session_id, run_id, round_no, "tool", output, call_id, now),
            )
            updated = conn.execute(
                "UPDATE tool_calls SET function=?, tool=?, action=?, arguments=?, status=?, output=?, error=?, "
                "files=?, duration_ms=?, truncated=?, waited_ms=? "
                "WHERE id = (SELECT id FROM tool_calls WHERE session_id=? AND run_id=? AND round=? AND call_id=? "
                "AND status=? ORDER BY id LIMIT 1)",
                (*head[4:], *tail, session_id, run_id, round_no, call_id, RUNNING),
            ).rowcount
            if not updated:  # a call that was not recorded as running (e.g. written by an older version)
                conn.execute(
                    "INSERT INTO tool_calls(session_id, run_id, round, call_id, function, tool, action, arguments, "
                    "status, output, error, files, duration_ms, truncated, waited_ms, created_at) "
                    "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (*head, *tail, now),
                )

    async def messages(self, session_id: str, *, all_branches: bool = False) -> list[StoredMessage]:
        """The messages of the active branch (what the chat shows and the model is sent); ``all_branches``:
        every stored message, edits and regenerations the user paged away from included (export)."""
        tree = None if all_branches else await self.branches.tree(session_id)
        # rows become objects in the worker thread too: a long chat's thousands of rows (JSON fields parsed)
        # cost tens of ms, and a turn reads its chat several times
        return await self.db.run(self._read_messages, session_id, tree)

    def _read_messages(self, session_id: str, tree: Any) -> list[StoredMessage]:
        rows = self.db.query("SELECT * FROM messages WHERE session_id=? ORDER BY id", (session_id,))
        if tree is not None:
            rows = self.branches.on_path(rows, tree)
        return [
            StoredMessage(
                id=r["id"],
                role=r["role"],
                content=r["content"],
                run_id=r["run_id"],
                round=r["round"],
                tool_calls=json.loads(r["tool_calls"]) if r["tool_calls"] else [],
                tool_call_id=r["tool_call_id"] or "",
                status=r["status"],
                created_at=r["created_at"],
                reasoning=r["reasoning"] or "",
                meta=parse_meta(r["meta"]),
            )
            for r in rows
        ]

    async def tool_calls(self, session_id: str, run_id: str | None = None) -> list[StoredToolCall]:
        sql = "SELECT * FROM tool_calls WHERE session_id=?"
        params: tuple[Any, ...] = (session_id,)
        if run_id is not None:
            sql += " AND run_id=?"
            params += (run_id,)
        return await self.db.run(self._read_tool_calls, sql + " ORDER BY id", params)

    def _read_tool_calls(self, sql: str, params: tuple[Any, ...]) -> list[StoredToolCall]:
        rows = self.db.query(sql, params)
        return [
            StoredToolCall(
                r["call_id"],
                r["run_id"],
                r["function"],
                r["tool"],
                r["action"],
                r["arguments"],
                r["status"],
                r["output"],
                r["error"],
                json.loads(r["files"]),
                r["duration_ms"],
                bool(r["truncated"]),
                r["waited_ms"],
            )
            for r in rows
        ]

    async def recent_tools(self, session_id: str, turns: int = 3) -> list[list[str]]:
        """Tools used in the last ``turns`` turns of the session, newest turn first."""
        rows = await self.db.run(
            self.db.query,
            "SELECT t.run_id, GROUP_CONCAT(DISTINCT c.tool) AS tools FROM turns t "
            "JOIN tool_calls c ON c.run_id = t.run_id AND c.tool != '' "
            "WHERE t.session_id=? GROUP BY t.run_id ORDER BY t.started_at DESC LIMIT ?",
            (session_id, turns),
        )
        return [sorted(str(r["tools"]).split(",")) for r in rows]

    async def messages_for_model(self, session_id: str, *, max_chars: int = 200_000) -> list[dict[str, Any]]:
        """The session as OpenAI chat messages, repaired and trimmed to the newest ``max_chars``."""
        return build_model_messages(await self.messages(session_id), max_chars=max_chars)


_SESSION_SQL = (
    "SELECT s.id, s.title, s.created_at, s.updated_at, s.model, COUNT(m.id) AS n FROM sessions s "
    "LEFT JOIN messages m ON m.session_id = s.id AND m.role IN ('user', 'assistant')"
)


def _session(r: Any) -> SessionInfo:
    return SessionInfo(r["id"], r["title"], r["created_at"], r["updated_at"], r["model"], int(r["n"] or 0))


def _title_from(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= 40 else line[:39] + "…"


def _escape_like(term: str) -> str:
    return term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _snippet(content: str, term: str, width: int = 80) -> str:
    pos = content.lower().find(term.lower())
    start = max(0, pos - width // 2) if pos >= 0 else 0
    text = " ".join(content[start : start + width].split())
    return ("…" if start > 0 else "") + text + ("…" if start + width < len(content) else "")


def _old_writer_alive(pid: int, started_at: float) -> bool:
    """True when the process that started a turn (pid ``pid`` at ``started_at``) may still run it.

    Only for turns of a writer that held no session lock (written by an older version): a live process
    that started after the turn is a reused pid, not the writer.
    """
    if pid <= 0 or pid == os.getpid():
        return False
    try:
        import psutil

        proc = psutil.Process(pid)
        return bool(proc.is_running() and proc.create_time() <= started_at + 1.0 and _is_weclaw(proc))
    except Exception:  # gone, or not ours to look at
        return False


def _is_weclaw(proc: Any) -> bool:
    try:
        return any("weclaw" in part.lower() for part in proc.cmdline())
    except Exception:
        return True  # cannot tell: assume it is
