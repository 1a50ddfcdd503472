"""Pure helpers: email addresses, and where the database lives (times: tests/tools_b/test_timeparse.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from weclaw_desktop.paths import app_paths
from weclaw_desktop.toolkit.base import ToolContext
from weclaw_desktop.tools._db import forget_database, tool_database
from weclaw_desktop.tools.email_message import AddressError, parse_mailbox, parse_mailboxes


def test_addresses() -> None:
    assert parse_mailbox("Li Lei <li@例子.中国>").address == "li@xn--fsqu00a.xn--fiqs8s"
    assert [m.address for m in parse_mailboxes(['"Wang, Fang" <f@x.com>; b@y.com, B@Y.com'])] == ["f@x.com", "b@y.com"]
    for bad in ("bob", "bob@localhost", ".a@b.com", "a@-b.com", "a b@c.com", "a@b.com, c@d.com", "A <a@b.com"):
        with pytest.raises(AddressError):
            parse_mailbox(bad)


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
