"""Pure helpers: durations and times (todo, reminder), email addresses, and where the database lives."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from weclaw_desktop.paths import app_paths
from weclaw_desktop.toolkit.base import ToolContext
from weclaw_desktop.tools._db import forget_database, tool_database
from weclaw_desktop.tools.email_message import AddressError, parse_mailbox, parse_mailboxes
from weclaw_desktop.tools.schedule_time import TimeParseError, local_zone, parse_datetime, parse_duration

SHANGHAI = local_zone("Asia/Shanghai")


@pytest.mark.parametrize(
    ("text", "minutes"),
    [
        ("20m", 20),
        ("in 20 minutes", 20),
        ("1h30m", 90),
        ("1.5 hours", 90),
        ("PT20M", 20),
        ("20分钟后", 20),
        ("1小时30分钟", 90),
        ("半小时", 30),
        ("2天", 2880),
        ("1 hour and 5 min", 65),
        ("1 week", 10080),
    ],
)
def test_durations(text: str, minutes: int) -> None:
    assert parse_duration(text) == timedelta(minutes=minutes)


@pytest.mark.parametrize("text", ["", "soon", "20", "0 minutes", "5 parsecs", "-5m"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(TimeParseError):
        parse_duration(text)


def test_absolute_times_in_a_zone() -> None:
    now = datetime(2026, 11, 30, 20, 0, tzinfo=SHANGHAI)
    assert parse_datetime("2026-12-01 09:00", SHANGHAI, now) == (datetime(2026, 12, 1, 9, 0, tzinfo=SHANGHAI), True)
    assert parse_datetime("2026-12-01", SHANGHAI, now)[1] is False
    assert parse_datetime("2026-12-01T01:00:00Z", SHANGHAI, now)[0] == datetime(2026, 12, 1, 1, 0, tzinfo=UTC)
    assert parse_datetime("21:30", SHANGHAI, now)[0] == datetime(2026, 11, 30, 21, 30, tzinfo=SHANGHAI)
    assert parse_datetime("08:15", SHANGHAI, now)[0] == datetime(2026, 12, 1, 8, 15, tzinfo=SHANGHAI)  # tomorrow
    assert parse_datetime("in 2 hours", SHANGHAI, now)[0] == now + timedelta(hours=2)
    for bad in ("明天", "25:00", "2026-13-01"):
        with pytest.raises(TimeParseError):
            parse_datetime(bad, SHANGHAI, now)
    with pytest.raises(TimeParseError, match="unknown time zone"):
        local_zone("Mars/Olympus")


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
