"""The one ``weclaw.db`` that the memory, todo and reminder tools share.

A tool finds the database through its call context: ``ctx.data_dir / "weclaw.db"``, which is
``app_paths().database`` in the app and the CLI (both set ``data_dir`` from the paths module), and a
per-test folder in tests (``WECLAW_HOME``). One :class:`Database` object per file is kept, so the app can
hand the same object to the reminder scheduler with :func:`shared_database`.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from weclaw_desktop.paths import app_paths
from weclaw_desktop.storage.db import Database
from weclaw_desktop.toolkit.base import ToolContext

DB_NAME = "weclaw.db"
log = logging.getLogger("weclaw.tools.db")

_lock = threading.Lock()
_open: dict[Path, Database] = {}


def shared_database(path: str | Path) -> Database:
    """The process-wide :class:`Database` for ``path`` (opened lazily, schema applied per component)."""
    key = Path(path).expanduser().resolve()
    with _lock:
        db = _open.get(key)
        if db is None:
            db = Database(key)
            _open[key] = db
        return db


def tool_database(ctx: ToolContext) -> Database:
    """The database a tool call should use: ``weclaw.db`` in the call's data folder.

    A context whose ``data_dir`` was left at its default (the current directory) gets the paths module's
    database instead, so a caller that forgot to set it never scatters a weclaw.db next to the code.
    """
    data_dir = Path(ctx.data_dir)
    if data_dir.resolve() == Path.cwd().resolve():
        default = app_paths().database
        if default.parent.resolve() != data_dir.resolve():
            log.warning("ToolContext.data_dir is the working directory; using %s", default)
            return shared_database(default)
    return shared_database(data_dir / DB_NAME)


def forget_database(path: str | Path) -> None:
    """Close and drop the shared object for ``path`` (tests that simulate an app restart use it)."""
    key = Path(path).expanduser().resolve()
    with _lock:
        db = _open.pop(key, None)
    if db is not None:
        db.close()
