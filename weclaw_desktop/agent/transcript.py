"""A stored conversation as it was shown: the read path front ends use to restore a chat.

:func:`load_transcript` reads a session's messages, tool calls, turns and audit rows in one worker-thread
job and returns :class:`Transcript` entries in display order:

- :class:`ShownMessage` — a user or assistant message with its stored status (``partial`` = the stream was
  cut, ``cancelled`` = the user stopped it), its timestamp and, when the history has them, the model's
  reasoning and how long it thought;
- :class:`ShownCall` — a tool call right after the assistant message that asked for it: function, tool,
  action, arguments, status, output, error, files, duration and how much of it was spent waiting for the
  user's approval (``waited_ms``; None when not known: a row from before waits were stored), and from the
  audit who decided and why it did not succeed (``error_kind``: ``denied``, ``disabled``, ``not-offered``...).
  A call the model asked for that has no result row (the process died, an older version) is ``interrupted``;
- :class:`TurnEnd` — how a turn ended when it did not simply complete: ``cancelled`` (Stop), ``error``
  (with the one-line message the user saw), ``max_rounds``, ``loop_guard``, ``budget``, ``interrupted``
  (the app stopped during it), ``running`` (still running, in this process or another).

Tool-result messages are not entries: the call carries its result. Only the active branch is shown: turns the
user moved away from (an earlier version of an edited message, another answer; ``agent/history_branches.py``)
are left out. Nothing here writes; the history's schema is read as it is (the reasoning columns, the call's wait
and the branch tables are optional), so this module needs no migration of its own.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from weclaw_desktop.storage.db import Database

#: Turn statuses that leave a visible mark in the chat (everything but ``completed``).
MARKED_TURNS = frozenset({"cancelled", "error", "max_rounds", "loop_guard", "budget", "interrupted", "running"})


@dataclass(frozen=True)
class ShownMessage:
    id: int
    role: str  # user | assistant
    text: str
    run_id: str = ""
    status: str = "complete"  # complete | partial | cancelled
    created_at: float = 0.0
    reasoning: str = ""
    reasoning_ms: int = 0


@dataclass(frozen=True)
class ShownCall:
    call_id: str
    run_id: str
    function: str
    tool: str
    action: str
    arguments: str
    status: str  # success | error | timeout | denied | cancelled | running | interrupted
    output: str = ""
    error: str = ""
    files: list[str] = field(default_factory=list)
    duration_ms: float = 0.0
    truncated: bool = False
    created_at: float = 0.0
    error_kind: str = ""  # ErrorKind value from the audit ('' when it succeeded or no audit row)
    decided_by: str = ""  # DecidedBy value from the audit
    waited_ms: float | None = None  # of duration_ms, the wait for the user's approval (None: not known)


@dataclass(frozen=True)
class TurnEnd:
    run_id: str
    status: str  # one of MARKED_TURNS
    message: str = ""
    at: float = 0.0


Entry = ShownMessage | ShownCall | TurnEnd


@dataclass(frozen=True)
class Transcript:
    session_id: str
    entries: list[Entry]

    @property
    def messages(self) -> list[ShownMessage]:
        return [e for e in self.entries if isinstance(e, ShownMessage)]

    @property
    def calls(self) -> list[ShownCall]:
        return [e for e in self.entries if isinstance(e, ShownCall)]


async def load_transcript(db: Database, session_id: str) -> Transcript:
    """The session as it was shown (see the module docstring); one worker-thread job."""
    return Transcript(session_id, await db.run(_read, db, session_id))


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {str(r[1]) for r in conn.execute(f"PRAGMA table_info({table})").fetchall()}


def _read(db: Database, session_id: str) -> list[Entry]:
    conn = db.connect()
    conn.execute("BEGIN")  # a read transaction: one consistent snapshot of the four tables (WAL), no write lock
    try:
        messages = conn.execute(
            "SELECT * FROM messages WHERE session_id=? AND role IN ('user', 'assistant') ORDER BY id", (session_id,)
        ).fetchall()
        calls = conn.execute("SELECT * FROM tool_calls WHERE session_id=? ORDER BY id", (session_id,)).fetchall()
        turns = conn.execute(
            "SELECT run_id, status, message, started_at, finished_at FROM turns WHERE session_id=?", (session_id,)
        ).fetchall()
        if _columns(conn, "turn_tree"):  # branches: only the path the user is on (read in this snapshot)
            from weclaw_desktop.agent.history_branches import Branches

            tree = Branches(db).tree_sync(session_id)
            messages, calls, turns = (Branches.on_path(rows, tree) for rows in (messages, calls, turns))
        audit: list[Any] = []
        if "error_kind" in _columns(conn, "audit"):
            audit = conn.execute(
                "SELECT run_id, call_id, error_kind, decided_by FROM audit WHERE session_id=?", (session_id,)
            ).fetchall()
    finally:
        conn.execute("COMMIT")
    return build_entries(messages, calls, turns, audit)


def build_entries(messages: list[Any], calls: list[Any], turns: list[Any], audit: list[Any]) -> list[Entry]:
    """Rows (sqlite3.Row or mappings) -> entries in display order."""
    decided = {(str(a["run_id"]), str(a["call_id"])): (str(a["error_kind"]), str(a["decided_by"])) for a in audit}
    by_call: dict[tuple[str, str], Any] = {}
    for c in calls:
        by_call.setdefault((str(c["run_id"]), str(c["call_id"])), c)  # the first row of a call id in a run
    turn_info = {str(t["run_id"]): t for t in turns}
    out: list[Entry] = []
    current_run = ""

    def close_run(run_id: str) -> None:
        t = turn_info.get(run_id)
        if t is not None and str(t["status"]) in MARKED_TURNS:
            out.append(TurnEnd(run_id, str(t["status"]), str(t["message"] or ""), float(t["finished_at"] or 0.0)))

    shown_calls: set[tuple[str, str]] = set()
    for m in messages:
        run_id = str(m["run_id"] or "")
        if m["role"] == "user" and current_run and run_id != current_run:
            close_run(current_run)
        current_run = run_id or current_run
        keys = m.keys() if hasattr(m, "keys") else list(m)
        reasoning = str(m["reasoning"] or "") if "reasoning" in keys else ""
        meta = _json(m["meta"]) if "meta" in keys else {}
        text = str(m["content"] or "")
        if text.strip() or reasoning.strip():
            out.append(
                ShownMessage(
                    id=int(m["id"]),
                    role=str(m["role"]),
                    text=text,
                    run_id=run_id,
                    status=str(m["status"] or "complete"),
                    created_at=float(m["created_at"] or 0.0),
                    reasoning=reasoning,
                    reasoning_ms=int(meta.get("reasoning_ms") or 0) if isinstance(meta, dict) else 0,
                )
            )
        asked = _json(m["tool_calls"]) if m["tool_calls"] else []
        for spec in asked if isinstance(asked, list) else []:
            if not isinstance(spec, dict):
                continue
            call_id = str(spec.get("id", ""))
            key = (run_id, call_id)
            if key in shown_calls:
                continue
            shown_calls.add(key)
            row = by_call.get(key)
            fn = spec.get("function") if isinstance(spec.get("function"), dict) else {}
            out.append(_call(row, key, fn or {}, decided.get(key, ("", "")), turn_info.get(run_id)))
    if current_run:
        close_run(current_run)
    return out


def _call(row: Any, key: tuple[str, str], fn: dict[str, Any], decided: tuple[str, str], turn: Any) -> ShownCall:
    run_id, call_id = key
    if row is None:  # asked for, never recorded: the app stopped first (or an older version)
        still = turn is not None and str(turn["status"]) == "running"
        return ShownCall(
            call_id,
            run_id,
            str(fn.get("name", "")),
            "",
            "",
            str(fn.get("arguments", "")),
            "running" if still else "interrupted",
        )
    status = str(row["status"])
    if status == "running" and turn is not None and str(turn["status"]) != "running":
        status = "interrupted"
    files = _json(row["files"])
    waited = row["waited_ms"] if "waited_ms" in _keys(row) else None
    return ShownCall(
        call_id=call_id,
        run_id=run_id,
        function=str(row["function"]),
        tool=str(row["tool"]),
        action=str(row["action"]),
        arguments=str(row["arguments"] or ""),
        status=status,
        output=str(row["output"] or ""),
        error=str(row["error"] or ""),
        files=[str(f) for f in files] if isinstance(files, list) else [],
        duration_ms=float(row["duration_ms"] or 0.0),
        truncated=bool(row["truncated"]),
        created_at=float(row["created_at"] or 0.0),
        error_kind=decided[0],
        decided_by=decided[1],
        waited_ms=float(waited) if waited is not None else None,
    )


def _keys(row: Any) -> list[str]:
    return list(row.keys() if hasattr(row, "keys") else row)


def _json(raw: Any) -> Any:
    if not raw:
        return {}
    try:
        return json.loads(raw)
    except (TypeError, ValueError):
        return {}
