"""Where the tool database lives (tools/_db.py). E-mail addresses: tests/tools/email/test_email_message.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from toolrun import tool_context

from weclaw_desktop.toolkit.base import ToolContext, ToolError
from weclaw_desktop.tools._db import forget_database, shared_database, tool_database


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
