"""Where the tool database lives (tools/_db.py). E-mail addresses: tests/tools/email/test_email_message.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from weclaw_desktop.paths import app_paths
from weclaw_desktop.toolkit.base import ToolContext
from weclaw_desktop.tools._db import forget_database, tool_database


def test_tool_database_never_lands_in_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    db = tool_database(ToolContext())  # data_dir left at its default (the cwd)
    try:
        assert db.path == app_paths().database
    finally:
        forget_database(db.path)
    explicit = tool_database(ToolContext(data_dir=tmp_path / "elsewhere"))
    try:
        assert explicit.path == (tmp_path / "elsewhere" / "weclaw.db").resolve()
    finally:
        forget_database(explicit.path)
