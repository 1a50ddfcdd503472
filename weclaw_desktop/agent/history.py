"""Conversation history in SQLite (``weclaw.db``): sessions, turns, messages and tool calls.

Every write is its own committed transaction, and the loop awaits it before the next round starts, so a
process killed mid-turn loses at most the round in flight. :meth:`HistoryStore.messages_for_model`
repairs what a crash can leave behind (an assistant message whose tool calls never got results) so the
session always resumes with a request the endpoint accepts.

All methods are async and run their SQLite work in a worker thread (``Database.run``).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from weclaw_desktop.agent import history_reasoning
from weclaw_desktop.agent.history_reasoning import REASONING_COMPONENT, parse_meta
from weclaw_desktop.agent.provider.messages import META
from weclaw_desktop.storage.db import Database, Migration, register_migrations
from weclaw_desktop.toolkit.redact import redact

COMPONENT = "history"

register_migrations(
    COMPONENT,
    [
        Migration(
            1,
            """
            CREATE TABLE sessions (
                id TEXT PRIMARY KEY,
                title TEXT NOT NULL DEFAULT '',
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL,
                model TEXT NOT NULL DEFAULT '',
                origin TEXT NOT NULL DEFAULT ''
            );
            CREATE TABLE turns (
                run_id TEXT PRIMARY KEY,
                session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                started_at REAL NOT NULL,
                finished_at REAL,
                status TEXT NOT NULL DEFAULT 'running',
                rounds INTEGER NOT NULL DEFAULT 0,
                pid INTEGER NOT NULL DEFAULT 0,
                message TEXT NOT NULL DEFAULT ''
            );
            CREATE INDEX turns_session ON turns(session_id, started_at);
            CREATE TABLE messages (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                run_id TEXT NOT NULL DEFAULT '',
                round INTEGER NOT NULL DEFAULT 0,
                role TEXT NOT NULL,
                content TEXT NOT NULL DEFAULT '',
                tool_calls TEXT,
                tool_call_id TEXT,
                status TEXT NOT NULL DEFAULT 'complete',
                created_at REAL NOT NULL
            );
            CREATE INDEX messages_session ON messages(session_id, id);
            CREATE TABLE tool_calls (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                run_id TEXT NOT NULL,
                round INTEGER NOT NULL DEFAULT 0,
                call_id TEXT NOT NULL,
                function TEXT NOT NULL,
                tool TEXT NOT NULL DEFAULT '',
                action TEXT NOT NULL DEFAULT '',
                arguments TEXT NOT NULL DEFAULT '',
                status TEXT NOT NULL,
                output TEXT NOT NULL DEFAULT '',
                error TEXT NOT NULL DEFAULT '',
                files TEXT NOT NULL DEFAULT '[]',
                duration_ms REAL NOT NULL DEFAULT 0,
                truncated INTEGER NOT NULL DEFAULT 0,
                created_at REAL NOT NULL
            );
            CREATE INDEX tool_calls_run ON tool_calls(session_id, run_id);
            """,
        ),
    ],
)
history_reasoning.register()

INTERRUPTED_RESULT = "The call did not finish: the app stopped before it returned. Ask before retrying it."


@dataclass(frozen=True)
class SessionInfo:
    id: str
    title: str
    created_at: float
    updated_at: float
    model: str = ""
    message_count: int = 0


@dataclass(frozen=True)
class StoredMessage:
    """A message as stored, for display (the GUI's transcript, ``weclaw chat`` resume)."""

    id: int
    role: str  # user | assistant | tool
    content: str
    run_id: str = ""
    round: int = 0
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    tool_call_id: str = ""
    status: str = "complete"  # complete | partial (stream cut) | cancelled
    created_at: float = 0.0
    reasoning: str = ""  # the model's thinking (assistant messages of reasoning models)
    meta: dict[str, Any] = field(default_factory=dict)  # reasoning field, opaque fields, source, reasoning_ms

    @property
    def reasoning_ms(self) -> int:
        return int(self.meta.get("reasoning_ms") or 0)


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


class HistoryStore:
    def __init__(self, db: Database) -> None:
        self.db = db
        db.ensure(COMPONENT)
        db.ensure(REASONING_COMPONENT)  # after the base schema: it adds columns to its messages table

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
        return bool(await self.db.run(self._changes, "DELETE FROM sessions WHERE id=?", (session_id,)))

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
        """Record the start of a turn and the user's message (durable). Returns the message id."""
        return await self.db.run(self._begin_turn, session_id, run_id, user_text)

    def _begin_turn(self, session_id: str, run_id: str, user_text: str) -> int:
        now = time.time()
        with self.db.transaction() as conn:
            row = conn.execute("SELECT title FROM sessions WHERE id=?", (session_id,)).fetchone()
            if row is None:
                raise KeyError(f"no session {session_id}")
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
        await self.db.run(
            self.db.execute,
            "UPDATE turns SET status=?, rounds=?, finished_at=?, message=? WHERE run_id=?",
            (status, rounds, time.time(), message, run_id),
        )

    async def turn_status(self, run_id: str) -> str | None:
        rows = await self.db.run(self.db.query, "SELECT status FROM turns WHERE run_id=?", (run_id,))
        return str(rows[0]["status"]) if rows else None

    async def mark_abandoned_turns(self) -> int:
        """Turns left 'running' by a process that no longer exists become 'interrupted'."""
        rows = await self.db.run(self.db.query, "SELECT run_id, pid FROM turns WHERE status='running'")
        dead = [r["run_id"] for r in rows if r["pid"] != os.getpid() and not _pid_alive(int(r["pid"]))]
        for run_id in dead:
            await self.finish_turn(run_id, "interrupted", 0, "the app stopped during this turn")
        return len(dead)

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
        reasoning: str = "",
        meta: dict[str, Any] | None = None,
    ) -> int:
        """An assistant message; ``reasoning`` and ``meta`` (a message's ``_meta`` without the reasoning text)
        are kept with it so a resumed session sends what the endpoint requires back."""
        calls = json.dumps(tool_calls, ensure_ascii=False) if tool_calls else None
        extra = {k: v for k, v in (meta or {}).items() if k != "reasoning"}
        return await self.db.run(
            self._insert_message,
            session_id,
            run_id,
            round_no,
            "assistant",
            text,
            calls,
            None,
            status,
            reasoning,
            json.dumps(extra, ensure_ascii=False) if extra else None,
        )

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
    ) -> None:
        """The tool message the model reads and the tool-call record, in one transaction."""
        await self.db.run(
            self._tool_result,
            (session_id, run_id, round_no, call_id, function, tool, action, redact(arguments), status),
            (redact(output), redact(error), json.dumps(files or [], ensure_ascii=False), duration_ms, int(truncated)),
        )

    def _insert_message(
        self,
        session_id: str,
        run_id: str,
        round_no: int,
        role: str,
        content: str,
        tool_calls: str | None,
        tool_call_id: str | None,
        status: str,
        reasoning: str = "",
        meta: str | None = None,
    ) -> int:
        now = time.time()
        with self.db.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO messages(session_id, run_id, round, role, content, tool_calls, tool_call_id, status, "
                "created_at, reasoning, meta) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
                (session_id, run_id, round_no, role, content, tool_calls, tool_call_id, status, now, reasoning, meta),
            )
            conn.execute("UPDATE sessions SET updated_at=? WHERE id=?", (now, session_id))
            return int(cur.lastrowid or 0)

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
            conn.execute(
                "INSERT INTO tool_calls(session_id, run_id, round, call_id, function, tool, action, arguments, "
                "status, output, error, files, duration_ms, truncated, created_at) "
                "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (*head, *tail, now),
            )

    async def messages(self, session_id: str) -> list[StoredMessage]:
        rows = await self.db.run(self.db.query, "SELECT * FROM messages WHERE session_id=? ORDER BY id", (session_id,))
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
        rows = await self.db.run(self.db.query, sql + " ORDER BY id", params)
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


def build_model_messages(stored: list[StoredMessage], *, max_chars: int = 200_000) -> list[dict[str, Any]]:
    """OpenAI messages from stored rows.

    A tool call without a result (the process died mid-call, or the turn was stopped) gets a synthetic
    "did not finish" result; a tool message without its call is dropped; a partial assistant text
    (stream cut) is kept as text. Older messages are dropped first when over ``max_chars``, always
    restarting at a user message so no tool result loses its call.
    """
    out: list[dict[str, Any]] = []
    open_calls: list[str] = []
    answered: set[str] = set()

    def close_open() -> None:
        for cid in open_calls:
            if cid not in answered:
                out.append({"role": "tool", "tool_call_id": cid, "content": INTERRUPTED_RESULT})
        open_calls.clear()

    for m in stored:
        if m.role == "tool":
            if m.tool_call_id in open_calls and m.tool_call_id not in answered:
                answered.add(m.tool_call_id)
                out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
            continue
        close_open()
        if m.role == "user":
            out.append({"role": "user", "content": m.content})
        elif m.role == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": m.content or None}
            if m.reasoning or m.meta:  # the provider decides what of it goes back (agent/provider/messages.py)
                msg[META] = {**m.meta, "reasoning": m.reasoning} if m.reasoning else dict(m.meta)
            if m.tool_calls:
                msg["tool_calls"] = m.tool_calls
                open_calls.extend(c["id"] for c in m.tool_calls)
                answered = set()
            elif not m.content:
                continue
            out.append(msg)
    close_open()
    return _trim(out, max_chars)


def _size(m: dict[str, Any]) -> int:
    meta = m.get(META) or {}
    reasoning = len(str(meta.get("reasoning") or "")) + (len(json.dumps(meta["extras"])) if meta.get("extras") else 0)
    return len(str(m.get("content") or "")) + len(json.dumps(m.get("tool_calls") or "")) + reasoning


def _trim(messages: list[dict[str, Any]], max_chars: int) -> list[dict[str, Any]]:
    """Drop the oldest user turns (whole: a user message and everything up to the next one) until the rest fits.

    Messages are never shortened, so a kept tool-call turn keeps its reasoning and opaque fields, which DeepSeek-
    and Kimi-style endpoints require with it."""
    total = sum(_size(m) for m in messages)
    start = 0
    while total > max_chars and start < len(messages) - 1:
        total -= _size(messages[start])
        start += 1
        while start < len(messages) - 1 and messages[start]["role"] != "user":
            total -= _size(messages[start])
            start += 1
    return messages[start:]


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


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        import psutil

        return bool(psutil.pid_exists(pid))
    except ImportError:  # pragma: no cover - psutil is a dependency
        if os.name == "nt":  # os.kill(pid, 0) would send CTRL_C_EVENT on Windows: assume alive
            return True
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True
