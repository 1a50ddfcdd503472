"""The one time parser: zones, moments, durations (datetime tool) and schedule times (reminder, todo)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from dateutil.relativedelta import relativedelta

from weclaw_desktop.tools.timeparse import (
    TimeInputError,
    end_of_day,
    format_local,
    from_epoch,
    local_zone,
    parse_delay,
    parse_duration,
    parse_moment,
    parse_schedule_time,
    resolve_zone,
    to_epoch,
    zone_label,
)

SH = ZoneInfo("Asia/Shanghai")
SHANGHAI = local_zone("Asia/Shanghai")


# --- moments and calendar durations (datetime tool) ---------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected", "date_only"),
    [
        ("2025-03-05", datetime(2025, 3, 5, tzinfo=SH), True),
        ("2025-03-05T10:00Z", datetime(2025, 3, 5, 18, 0, tzinfo=SH), False),
        ("March 5 2025 3pm", datetime(2025, 3, 5, 15, 0, tzinfo=SH), False),
        ("2025年3月5日", datetime(2025, 3, 5, tzinfo=SH), True),
        ("2025年3月5日 14:30", datetime(2025, 3, 5, 14, 30, tzinfo=SH), False),
        ("tomorrow", datetime(2025, 6, 2, tzinfo=SH), True),
        ("明天 9点", datetime(2025, 6, 2, 9, 0, tzinfo=SH), False),
        ("2 days ago", datetime(2025, 5, 30, 12, 0, tzinfo=SH), False),
        ("in 3 hours", datetime(2025, 6, 1, 15, 0, tzinfo=SH), False),
        ("3天后", datetime(2025, 6, 4, 12, 0, tzinfo=SH), False),
        ("2 weeks from 2025-01-01", datetime(2025, 1, 15, tzinfo=SH), True),
        # forms the merge added
        ("tomorrow 3pm", datetime(2025, 6, 2, 15, 0, tzinfo=SH), False),
        ("today 9:15 am", datetime(2025, 6, 1, 9, 15, tzinfo=SH), False),
        ("today 9:15 pm", datetime(2025, 6, 1, 21, 15, tzinfo=SH), False),
        ("tomorrow at 12 a.m.", datetime(2025, 6, 2, 0, 0, tzinfo=SH), False),
        ("2025-03-05 09", datetime(2025, 3, 5, 9, 0, tzinfo=SH), False),
        ("20250305", datetime(2025, 3, 5, tzinfo=SH), True),
        ("后天 下午3点半", datetime(2025, 6, 3, 15, 30, tzinfo=SH), False),
        ("半小时后", datetime(2025, 6, 1, 12, 30, tzinfo=SH), False),
        ("二十分钟以前", datetime(2025, 6, 1, 11, 40, tzinfo=SH), False),
        ("3个月后", datetime(2025, 9, 1, 12, 0, tzinfo=SH), False),
    ],
)
def test_parse_moment(text: str, expected: datetime, date_only: bool) -> None:
    now = datetime(2025, 6, 1, 12, 0, tzinfo=SH)
    assert parse_moment(text, SH, now=now) == (expected, date_only)


def test_parse_duration_and_zones() -> None:
    assert parse_duration("1h30m").hours == 1 and parse_duration("1h30m").minutes == 30
    assert parse_duration("两周").days == 14
    assert parse_duration("-90 minutes").hours == -1
    with pytest.raises(TimeInputError):
        parse_duration("1.5 months")
    assert str(resolve_zone("pst")) == "America/Los_Angeles"
    assert str(resolve_zone("new_york")) == "America/New_York"
    assert resolve_zone("UTC-3").utcoffset(None) == timedelta(hours=-3)
    with pytest.raises(TimeInputError, match="valid UTC offset"):
        resolve_zone("UTC+15")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # what the reminder parser read before the merge now works for date arithmetic too
        ("PT20M", relativedelta(minutes=20)),
        ("P1Y2M3DT4H", relativedelta(years=1, months=2, days=3, hours=4)),
        ("P2W", relativedelta(days=14)),
        ("-P1D", relativedelta(days=-1)),
        ("半小时", relativedelta(minutes=30)),
        ("半个小时", relativedelta(minutes=30)),
        ("一刻钟", relativedelta(minutes=15)),
        ("三刻钟", relativedelta(minutes=45)),
        ("两个钟头", relativedelta(hours=2)),
        ("两个半小时", relativedelta(hours=2, minutes=30)),
        ("1个礼拜", relativedelta(days=7)),
        ("二十分钟", relativedelta(minutes=20)),
        ("一小时零五分", relativedelta(hours=1, minutes=5)),
        ("1小时和5分钟", relativedelta(hours=1, minutes=5)),
        ("1 hour and 5 min", relativedelta(hours=1, minutes=5)),
        ("3 months", relativedelta(months=3)),
        ("2年", relativedelta(years=2)),
    ],
)
def test_duration_vocabulary(text: str, expected: relativedelta) -> None:
    assert parse_duration(text) == expected


def test_duration_errors_say_what_is_accepted() -> None:
    with pytest.raises(TimeInputError, match=re.escape("Could not read '3 fortnights' as a duration. Write it like")):
        parse_duration("3 fortnights")
    with pytest.raises(TimeInputError, match="years and months must be whole numbers"):
        parse_duration("P1.5M")
    with pytest.raises(TimeInputError, match="at most 10000 years"):
        parse_duration("20000 years")


# --- delays and schedule times (reminder, todo) ---------------------------------------------------------
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
        # forms the merge added
        ("二十分钟后", 20),
        ("一刻钟", 15),
        ("两个半小时", 150),
        ("两周", 20160),
        ("2 wks", 20160),
        ("after 10 secs", 1 / 6),
        ("3 hours from now", 180),
        ("P1DT1H", 1500),
    ],
)
def test_durations(text: str, minutes: int) -> None:
    assert parse_delay(text) == timedelta(minutes=minutes)


@pytest.mark.parametrize("text", ["", "soon", "20", "0 minutes", "5 parsecs", "-5m"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(TimeInputError):
        parse_delay(text)


def test_delay_errors_name_the_problem() -> None:
    with pytest.raises(TimeInputError, match="'soonish' is not a duration; write it like"):
        parse_delay("soonish")
    with pytest.raises(TimeInputError, match="the duration '0 minutes' must be longer than zero"):
        parse_delay("0 minutes")
    with pytest.raises(TimeInputError, match="'-5m' must be longer than zero"):
        parse_delay("-5m")
    with pytest.raises(TimeInputError, match="'3 months' counts months or years"):
        parse_delay("3 months")
    with pytest.raises(TimeInputError, match="'99999999999 weeks' is too long"):
        parse_delay("99999999999 weeks")


def test_absolute_times_in_a_zone() -> None:
    now = datetime(2026, 11, 30, 20, 0, tzinfo=SHANGHAI)
    assert parse_schedule_time("2026-12-01 09:00", SHANGHAI, now) == (
        datetime(2026, 12, 1, 9, 0, tzinfo=SHANGHAI),
        True,
    )
    assert parse_schedule_time("2026-12-01", SHANGHAI, now)[1] is False
    assert parse_schedule_time("2026-12-01T01:00:00Z", SHANGHAI, now)[0] == datetime(2026, 12, 1, 1, 0, tzinfo=UTC)
    assert parse_schedule_time("21:30", SHANGHAI, now)[0] == datetime(2026, 11, 30, 21, 30, tzinfo=SHANGHAI)
    assert parse_schedule_time("08:15", SHANGHAI, now)[0] == datetime(2026, 12, 1, 8, 15, tzinfo=SHANGHAI)  # tomorrow
    assert parse_schedule_time("in 2 hours", SHANGHAI, now)[0] == now + timedelta(hours=2)
    for bad in ("明天", "25:00", "2026-13-01"):
        with pytest.raises(TimeInputError):
            parse_schedule_time(bad, SHANGHAI, now)
    with pytest.raises(TimeInputError, match="unknown time zone"):
        local_zone("Mars/Olympus")


@pytest.mark.parametrize(
    ("text", "expected", "has_time"),
    [
        ("下午9点", datetime(2026, 11, 30, 21, 0, tzinfo=SH), True),  # later today
        ("下午3点", datetime(2026, 12, 1, 15, 0, tzinfo=SH), True),  # already past today: tomorrow
        ("9am", datetime(2026, 12, 1, 9, 0, tzinfo=SH), True),
        ("10:30 pm", datetime(2026, 11, 30, 22, 30, tzinfo=SH), True),
        ("20：45", datetime(2026, 11, 30, 20, 45, tzinfo=SH), True),
        ("明天 9点", datetime(2026, 12, 1, 9, 0, tzinfo=SH), True),
        ("tomorrow 3pm", datetime(2026, 12, 1, 15, 0, tzinfo=SH), True),
        ("12月5日", datetime(2026, 12, 5, tzinfo=SH), False),
        ("2026-12-01 09", datetime(2026, 12, 1, 9, 0, tzinfo=SH), True),
        ("friday 6pm", datetime(2026, 12, 4, 18, 0, tzinfo=SH), True),
        ("2026年12月5日 下午3点", datetime(2026, 12, 5, 15, 0, tzinfo=SH), True),
        ("3 weeks from 2026-12-01", datetime(2026, 12, 22, tzinfo=SH), False),
        ("3时", datetime(2026, 11, 30, 23, 0, tzinfo=SH), True),  # a delay of 3 hours, as it always was here
        ("一刻钟后", datetime(2026, 11, 30, 20, 15, tzinfo=SH), True),
        ("in 1 month", datetime(2026, 12, 30, 20, 0, tzinfo=SH), True),  # calendar months count from now
        ("2个月后", datetime(2027, 1, 30, 20, 0, tzinfo=SH), True),
    ],
)
def test_schedule_times_in_user_words(text: str, expected: datetime, has_time: bool) -> None:
    now = datetime(2026, 11, 30, 20, 0, tzinfo=SH)
    assert parse_schedule_time(text, SH, now) == (expected, has_time)


def test_schedule_time_errors_say_what_is_accepted() -> None:
    now = datetime(2026, 11, 30, 20, 0, tzinfo=SH)
    with pytest.raises(TimeInputError, match="'next blursday' is not a time I understand; use ISO 8601"):
        parse_schedule_time("next blursday", SH, now)
    with pytest.raises(
        TimeInputError, match=r"'tomorrow' does not say when; give the time of day too \(e.g. 'tomorrow 09:00'\)"
    ):
        parse_schedule_time("tomorrow", SH, now)
    with pytest.raises(TimeInputError, match="'20' is a bare number; say what it counts"):
        parse_schedule_time("20", SH, now)  # dateutil alone would read it as the 20th
    with pytest.raises(TimeInputError, match="the time is empty"):
        parse_schedule_time("   ", SH, now)
    with pytest.raises(TimeInputError, match="'25:00' has an invalid time of day"):
        parse_schedule_time("25:00", SH, now)
    with pytest.raises(TimeInputError, match="'13pm' has an invalid time of day"):
        parse_schedule_time("13pm", SH, now)
    with pytest.raises(TimeInputError, match="'-5m' must be longer than zero"):
        parse_schedule_time("-5m", SH, now)  # dateutil alone would read it as 00:05
    with pytest.raises(TimeInputError, match="'-1 month' must be longer than zero"):
        parse_schedule_time("-1 month", SH, now)


# --- zones and storage ----------------------------------------------------------------------------------
def test_configured_zones_take_every_form_the_datetime_tool_does() -> None:
    assert local_zone("北京") == SH
    assert local_zone("tokyo") == ZoneInfo("Asia/Tokyo")
    assert local_zone("UTC+8") == timezone(timedelta(hours=8))
    with pytest.raises(TimeInputError, match="unknown time zone in the settings: 'CST' is ambiguous"):
        local_zone("CST")
    with pytest.raises(
        TimeInputError, match=re.escape("Unknown time zone 'Asia/Shangai'. Did you mean: Asia/Shanghai")
    ):
        local_zone("Asia/Shangai")


def test_stored_zone_names_read_back() -> None:
    # reminders store zone_label(tz) and read it back with local_zone(); a fixed offset must survive that
    for tz in (SH, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-3))):
        again = local_zone(zone_label(tz))
        assert again.utcoffset(datetime(2026, 1, 1)) == tz.utcoffset(datetime(2026, 1, 1))
    assert zone_label(SH) == "Asia/Shanghai"


def test_epoch_round_trip_and_local_display() -> None:
    moment = datetime(2026, 12, 1, 9, 0, tzinfo=SH)
    assert to_epoch(moment) == 1_796_086_800.0
    assert from_epoch(1_796_086_800.0, SH) == moment and from_epoch(1_796_086_800.0, SH).tzinfo is SH
    assert format_local(1_796_086_800.0, SH) == "2026-12-01 09:00 (Tue)"
    assert format_local(1_796_086_800.0, ZoneInfo("America/New_York"), with_time=False) == "2026-11-30 (Mon)"
    assert end_of_day(moment.date(), SH) == datetime(2026, 12, 1, 23, 59, 59, tzinfo=SH)
