"""JSON export and import of one chat: the rows of every history table that belong to it, with JSON-in-text
columns decoded for reading, and image attachments embedded (base64), so a chat moves between machines whole.

The format (``"format": "weclaw-chat"``, ``"version": 1``)::

    {"format", "version", "exported_at", "app",
     "session": {title, created_at, updated_at, model, origin},
     "setup": {provider, model, assistant, instructions, title_source},
     "turns": [{..turns row.., "parent_run", "kind"}], "messages": [{..row..}], "tool_calls": [...],
     "attachments": [{..row.., "data": base64 of an image}], "usage": [...], "choices": {parent: run}}

Import makes a new chat (new session and turn ids; nothing of an existing chat is touched) in one transaction:
a file that is not such a document, or is damaged, is refused with a message and writes nothing. Columns the
file has that this version's tables lack are skipped; columns it lacks get their defaults (so a chat exported by
another version still imports).
"""

from __future__ import annotations

import base64
import contextlib
import json
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from weclaw_desktop import __version__
from weclaw_desktop.attachments import MAX_IMAGE_BYTES, AttachmentError, store_image_bytes

if TYPE_CHECKING:
    from weclaw_desktop.agent.history import HistoryStore

FORMAT = "weclaw-chat"
VERSION = 1
MAX_IMPORT_BYTES = 512 * 1024 * 1024
_JSON_COLUMNS = frozenset({"tool_calls", "files", "meta"})
_TABLES = ("turns", "messages", "tool_calls", "attachments", "usage")
_DROP = frozenset({"id", "session_id"})


class ChatImportError(ValueError):
    """The file cannot be imported; the message says why (nothing was written)."""


def _rows(history: HistoryStore, table: str, session_id: str) -> list[dict[str, Any]]:
    order = "started_at, run_id" if table == "turns" else "id"
    rows = history.db.query(f"SELECT * FROM {table} WHERE session_id=? ORDER BY {order}", (session_id,))
    out = []
    for r in rows:
        row = {k: r[k] for k in r.keys() if k not in _DROP}  # noqa: SIM118 - sqlite3.Row
        for key in _JSON_COLUMNS & row.keys():
            if isinstance(row[key], str):
                with contextlib.suppress(ValueError):
                    row[key] = json.loads(row[key])
        out.append(row)
    return out


def _dump(history: HistoryStore, session_id: str) -> dict[str, Any]:
    db = history.db
    found = db.query("SELECT title, created_at, updated_at, model, origin FROM sessions WHERE id=?", (session_id,))
    if not found:
        raise KeyError(f"no conversation {session_id}")
    doc: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": time.time(),
        "app": f"WeClaw {__version__}",
        "session": dict(found[0]),
        "setup": {},
    }
    setup = history.chats.get_sync(session_id)
    doc["setup"] = {k: getattr(setup, k) for k in ("provider", "model", "assistant", "instructions", "title_source")}
    tree = {r["run_id"]: r for r in db.query("SELECT * FROM turn_tree WHERE session_id=?", (session_id,))}
    parents = history.branches.tree_sync(session_id).nodes
    for table in _TABLES:
        doc[table] = _rows(history, table, session_id)
    for turn in doc["turns"]:
        node = parents.get(turn["run_id"])
        turn["parent_run"] = node.parent if node is not None else ""
        turn["kind"] = tree[turn["run_id"]]["kind"] if turn["run_id"] in tree else "new"
    for att in doc["attachments"]:
        if att.get("kind") == "image":
            try:
                data = Path(att["path"]).read_bytes()
            except OSError:
                continue
            if len(data) <= MAX_IMAGE_BYTES:
                att["data"] = base64.b64encode(data).decode("ascii")
    doc["choices"] = {
        r["parent_run"]: r["run_id"]
        for r in db.query("SELECT parent_run, run_id FROM branch_choice WHERE session_id=?", (session_id,))
    }
    return doc


async def export_json(history: HistoryStore, session_id: str) -> dict[str, Any]:
    """The whole chat (every branch) as a JSON-ready dict. Raises KeyError for an unknown chat."""
    return await history.db.run(_dump, history, session_id)


def read_document(path: Path) -> dict[str, Any]:
    path = path.expanduser()
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ChatImportError(f"{path}: {exc.strerror or 'cannot be read'}") from exc
    if size > MAX_IMPORT_BYTES:
        raise ChatImportError(f"{path} is {size / 1_048_576:.0f} MB; chats up to 512 MB can be imported")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ChatImportError(f"{path} is not a text file (UTF-8)") from exc
    except ValueError as exc:
        raise ChatImportError(f"{path} is not valid JSON: {exc}") from exc
    return doc if isinstance(doc, dict) else {}


def _check(doc: Any) -> None:
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ChatImportError('not a WeClaw chat export (no "format": "weclaw-chat")')
    version = doc.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise ChatImportError(f"written by a newer WeClaw (chat format version {version}); update WeClaw to import it")
    if not isinstance(doc.get("session"), dict):
        raise ChatImportError("the file has no session")
    for table in _TABLES:
        rows = doc.get(table, [])
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise ChatImportError(f"'{table}' is not a list of objects")
    for table in ("turns", "messages", "tool_calls", "attachments", "usage"):
        for row in doc.get(table, []):
            if not isinstance(row.get("run_id", ""), str):
                raise ChatImportError(f"a row of '{table}' has a run_id that is not text")
    runs = {t.get("run_id") for t in doc.get("turns", [])}
    for m in doc.get("messages", []):
        if m.get("run_id") and m["run_id"] not in runs:
            raise ChatImportError(f"a message belongs to turn {m['run_id']}, which the file does not have")
        if m.get("role") not in ("user", "assistant", "tool"):
            raise ChatImportError(f"a message has the role {m.get('role')!r}")


def _columns(conn: Any, table: str) -> set[str]:
    return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}


def _insert(conn: Any, table: str, row: dict[str, Any], columns: set[str]) -> None:
    values = {}
    for key, value in row.items():
        if key in columns and key not in ("id",):
            if (key in _JSON_COLUMNS and not isinstance(value, str | type(None))) or isinstance(value, dict | list):
                value = json.dumps(value, ensure_ascii=False)
            values[key] = value
    names = ", ".join(values)
    conn.execute(f"INSERT INTO {table}({names}) VALUES({', '.join('?' for _ in values)})", tuple(values.values()))


def _load(history: HistoryStore, doc: dict[str, Any], image_dir: Path) -> str:
    _check(doc)
    sid = uuid.uuid4().hex[:16]
    ids = {t["run_id"]: uuid.uuid4().hex[:12] for t in doc.get("turns", []) if isinstance(t.get("run_id"), str)}

    def run(old: Any) -> str:
        return ids.get(old, "") if isinstance(old, str) else ""

    # images first (files, outside the transaction): a failure here writes nothing to the database
    images: dict[int, str] = {}
    for i, att in enumerate(doc.get("attachments", [])):
        if att.get("kind") == "image" and isinstance(att.get("data"), str):
            try:
                stored = store_image_bytes(base64.b64decode(att["data"], validate=True), store_dir=image_dir)
            except (ValueError, AttachmentError) as exc:
                raise ChatImportError(f"attachment {att.get('name')!r} is damaged: {exc}") from exc
            images[i] = stored.path
    session = doc["session"]
    now = time.time()
    try:
        with history.db.transaction() as conn:
            conn.execute(
                "INSERT INTO sessions(id, title, created_at, updated_at, model, origin) VALUES(?,?,?,?,?,?)",
                (
                    sid,
                    str(session.get("title") or ""),
                    float(session.get("created_at") or now),
                    now,
                    str(session.get("model") or ""),
                    "import",
                ),
            )
            cols = {t: _columns(conn, t) for t in _TABLES}
            for turn in doc.get("turns", []):
                row = {**turn, "session_id": sid, "run_id": run(turn.get("run_id"))}
                if row.get("status") == "running":
                    row["status"] = "interrupted"
                _insert(conn, "turns", row, cols["turns"])
                conn.execute(
                    "INSERT INTO turn_tree(run_id, session_id, parent_run, kind, created_at) VALUES(?,?,?,?,?)",
                    (row["run_id"], sid, run(turn.get("parent_run")), str(turn.get("kind") or "new"), now),
                )
            for table in ("messages", "tool_calls", "usage"):
                for item in doc.get(table, []):
                    _insert(conn, table, {**item, "session_id": sid, "run_id": run(item.get("run_id"))}, cols[table])
            for i, att in enumerate(doc.get("attachments", [])):
                row = {k: v for k, v in att.items() if k != "data"}
                row.update(session_id=sid, run_id=run(att.get("run_id")))
                if i in images:
                    row["path"] = images[i]
                _insert(conn, "attachments", row, cols["attachments"])
            for parent, chosen in (doc.get("choices") or {}).items():
                if run(chosen):
                    conn.execute(
                        "INSERT INTO branch_choice(session_id, parent_run, run_id) VALUES(?,?,?)",
                        (sid, run(parent), run(chosen)),
                    )
            raw_setup = doc.get("setup")
            setup: dict[str, Any] = raw_setup if isinstance(raw_setup, dict) else {}
            conn.execute(
                "INSERT INTO chat_setup(session_id, provider, model, assistant, instructions, title_source) "
                "VALUES(?,?,?,?,?,?)",
                (
                    sid,
                    str(setup.get("provider") or ""),
                    str(setup.get("model") or ""),
                    str(setup.get("assistant") or ""),
                    str(setup.get("instructions") or ""),
                    "user" if session.get("title") else "auto",
                ),
            )
    except ChatImportError:
        raise
    except Exception as exc:  # sqlite3 errors, bad values: the transaction was rolled back
        raise ChatImportError(f"the chat could not be imported: {type(exc).__name__}: {exc}") from exc
    return sid


async def import_json(history: HistoryStore, doc: dict[str, Any], *, image_dir: Path) -> str:
    """A new chat from an export; returns its id. Raises :class:`ChatImportError` (nothing written)."""
    return await history.db.run(_load, history, doc, image_dir)
