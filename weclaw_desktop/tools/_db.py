"""The one ``weclaw.db`` that the memory, todo and reminder tools share.

The composition root (the agent runtime, the app's services, a test) opens the database once with
:func:`shared_database` and injects it into every call's context (``ToolContext.db``, from the runtime's
``ToolEnv``). A tool gets it with :func:`tool_database`; nothing here guesses a folder. A context without a
database (a caller that has none, such as the self-test) makes such a tool refuse with a clear message.
"""

from __future__ import annotations

import threading
from pathlib import Path

from weclaw_desktop.storage.db import Database
from weclaw_desktop.toolkit.base import ToolContext, ToolError

DB_NAME = "weclaw.db"

_lock = threading.Lock()
_open: dict[Path, Database] = {}


def shared_database(path: str | Path) -> Database:
    """The process-wide :class:`Database` for ``path``, opened on first use with :meth:`Database.open`: a
    damaged file is moved aside first (``db.recovered`` says so), pending migrations are applied. A
    storage fault (locked, full) raises :class:`StorageError` and the next call tries again."""
    key = Path(path).expanduser().resolve()
    with _lock:
        db = _open.get(key)
        if db is None:
            db = Database.open(key)
            _open[key] = db
        return db


def tool_database(ctx: ToolContext) -> Database:
    """The database injected into this call's context."""
    if ctx.db is None:
        raise ToolError(
            "This tool keeps its data in the app's database, which is not available here. "
            "Use it from the app or `weclaw chat`."
        )
    return ctx.db


def forget_database(path: str | Path) -> None:
    """Close and drop the shared object for ``path`` (tests that simulate an app restart use it)."""
    key = Path(path).expanduser().resolve()
    with _lock:
        db = _open.pop(key, None)
    if db is not None:
        db.close()
