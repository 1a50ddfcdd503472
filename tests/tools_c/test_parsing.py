"""Pure helpers: email addresses, and where the database lives (times: tests/tools_b/test_timeparse.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from toolrun import tool_context

from weclaw_desktop.toolkit.base import ToolContext, ToolError
from weclaw_desktop.tools._db import forget_database, shared_database, tool_database
from weclaw_desktop.tools.email_message import AddressError, parse_mailbox, parse_mailboxes


def test_addresses() -> None:
    assert parse_mailbox("Li Lei <li@例子.中国>").address == "li@xn--fsqu00a.xn--fiqs8s"
    assert [m.address for m in parse_mailboxes(['"Wang, Fang" <f@x.com>; b@y.com, B@Y.com'])] == ["f@x.com", "b@y.com"]
    for bad in ("bob", "bob@localhost", ".a@b.com", "a@-b.com", "a b@c.com", "a@b.com, c@d.com", "A <a@b.com"):
        with pytest.raises(AddressError):
            parse_mailbox(bad)


def test_tool_database_is_the_injected_one_and_never_guessed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A context must name its folders (no working-directory default); a tool uses the injected database,
    and with none it refuses clearly instead of opening a weclaw.db somewhere."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TypeError):
        ToolContext()  # type: ignore[call-arg]
    with pytest.raises(ToolError, match="app's database"):
        tool_database(tool_context())
    injected = shared_database(tmp_path / "elsewhere" / "weclaw.db")
    try:
        assert tool_database(tool_context(db=injected)) is injected
    finally:
        forget_database(injected.path)
    assert not (tmp_path / "weclaw.db").exists()
