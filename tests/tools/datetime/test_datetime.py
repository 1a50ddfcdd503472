"""The datetime tool through the Dispatcher: now, zone conversion, differences and date arithmetic."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from toolrun import Run

from weclaw_desktop.toolkit import ToolContext, ToolStatus

SH = ZoneInfo("Asia/Shanghai")


@pytest.fixture
def drun(ctx: ToolContext) -> Run:
    return Run(ctx, config={"datetime": {"timezone": "Asia/Shanghai"}})


# --- now ----------------------------------------------------------------------------------------------
async def test_now_in_a_named_zone(drun: Run) -> None:
    before = datetime.now(ZoneInfo("Asia/Tokyo"))
    res = await drun("datetime_now", timezone="Tokyo")
    assert res.succeeded, res.output
    moment = datetime.fromisoformat(res.data["iso"])
    assert abs((moment - before).total_seconds()) < 5
    assert res.data["timezone"] == "Asia/Tokyo"
    assert res.data["utc_offset"] == "UTC+09:00"
    assert res.data["weekday"] == moment.strftime("%A")
    assert (
        res.data["weekday_zh"]
        == ("星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日")[moment.weekday()]
    )
    assert res.output.startswith(f"Now: {moment:%Y-%m-%d %H:%M:%S} {moment:%A} Asia/Tokyo (UTC+09:00), week ")


async def test_now_defaults_to_the_configured_zone(drun: Run) -> None:
    res = await drun("datetime_now")
    assert res.data["timezone"] == "Asia/Shanghai"
    assert res.data["utc_offset"] == "UTC+08:00"


async def test_now_bad_zone_suggests_close_names(drun: Run) -> None:
    res = await drun("datetime_now", timezone="Asia/Shangai")
    assert res.status is ToolStatus.ERROR
    assert "Unknown time zone 'Asia/Shangai'. Did you mean: Asia/Shanghai" in res.output
    res = await drun("datetime_now", timezone="CST")
    assert res.status is ToolStatus.ERROR
    assert "'CST' is ambiguous" in res.output and "America/Chicago" in res.output
    res = await drun("datetime_now", timezone=8)
    assert res.status is ToolStatus.ERROR and "timezone:" in res.output


# --- convert ------------------------------------------------------------------------------------------
async def test_convert_between_zones_with_dst(drun: Run) -> None:
    res = await drun(
        "datetime_convert",
        time="2025-07-01 09:00",
        from_zone="北京",
        to_zones=["New York", "Europe/London", "UTC+5:30"],
    )
    assert res.succeeded, res.output
    assert res.data["from"]["iso"] == "2025-07-01T09:00:00+08:00"
    assert [t["iso"] for t in res.data["to"]] == [
        "2025-06-30T21:00:00-04:00",  # New York is on daylight time in July
        "2025-07-01T02:00:00+01:00",
        "2025-07-01T06:30:00+05:30",
    ]
    assert res.data["to"][0]["weekday"] == "Monday"
    assert "= 2025-06-30 21:00:00 Monday America/New_York (UTC-04:00)  [New York]" in res.output


async def test_convert_winter_time_and_chinese_input(drun: Run) -> None:
    res = await drun("datetime_convert", time="2025年1月15日 下午3点半", to_zones=["America/Los_Angeles"])
    assert res.succeeded, res.output
    assert res.data["from"]["iso"] == "2025-01-15T15:30:00+08:00"
    assert res.data["to"][0]["iso"] == "2025-01-14T23:30:00-08:00"


async def test_convert_bad_inputs(drun: Run) -> None:
    res = await drun("datetime_convert", time="2025-13-45 10:00", to_zones=["UTC"])
    assert res.status is ToolStatus.ERROR
    assert "Could not read '2025-13-45 10:00' as a date or time" in res.output
    res = await drun("datetime_convert", time="now", to_zones=["Mars/Olympus"])
    assert res.status is ToolStatus.ERROR and "Unknown time zone 'Mars/Olympus'" in res.output
    res = await drun("datetime_convert", time="now", to_zones=[])
    assert res.status is ToolStatus.ERROR and "to_zones:" in res.output


# --- diff ---------------------------------------------------------------------------------------------
async def test_diff_between_two_dates(drun: Run) -> None:
    res = await drun("datetime_diff", start="2025-01-01", end="2025-12-25")
    assert res.succeeded, res.output
    assert res.data["total_days"] == 358
    assert res.data["calendar"] == "11 months, 24 days"
    expected_weekdays = sum(1 for i in range(358) if (date(2025, 1, 1) + timedelta(days=i)).weekday() < 5)
    assert res.data["weekdays"] == expected_weekdays == 256
    assert "358 days" in res.output and "The end is after the start." in res.output


async def test_diff_with_times_and_reversed_order(drun: Run) -> None:
    res = await drun("datetime_diff", start="2025-03-10 18:30", end="2025-03-10 09:00")
    assert res.succeeded
    assert res.data["total_hours"] == -9.5
    assert "9.50 hours" in res.output and "The end is before the start." in res.output


async def test_add_duration_to_a_date(drun: Run) -> None:
    res = await drun("datetime_diff", start="2025-03-31", add="-1 month")
    assert res.data["result"]["iso"] == "2025-02-28"  # month arithmetic clamps to the month's last day
    res = await drun("datetime_diff", start="2024-02-29", add="1 year")
    assert res.data["result"]["iso"] == "2025-02-28"
    res = await drun("datetime_diff", start="2025-01-01", add="3 weeks")
    assert res.data["result"] == {"iso": "2025-01-22", "weekday": "Wednesday", "weekday_zh": "星期三",
                                  "timezone": "Asia/Shanghai", "utc_offset": "UTC+08:00"}  # fmt: skip
    assert res.output == "2025-01-01 Wednesday + 21 days = 2025-01-22 Wednesday"
    res = await drun("datetime_diff", start="2025-01-01 10:00", add="2天4小时")
    assert res.data["result"]["iso"] == "2025-01-03T14:00:00+08:00"


async def test_weeks_from_today(drun: Run) -> None:
    res = await drun("datetime_diff", start="today", add="3 weeks")
    expected = datetime.now(SH).date() + timedelta(weeks=3)
    assert res.data["result"]["iso"] == expected.isoformat()


async def test_diff_bad_inputs(drun: Run) -> None:
    res = await drun("datetime_diff", start="2025-01-01")
    assert res.status is ToolStatus.ERROR and "Give either end" in res.output
    res = await drun("datetime_diff", start="2025-01-01", end="2025-02-01", add="1 day")
    assert res.status is ToolStatus.ERROR and "not both" in res.output
    res = await drun("datetime_diff", start="2025-01-01", add="3 fortnights")
    assert res.status is ToolStatus.ERROR and "Could not read '3 fortnights' as a duration" in res.output
    res = await drun("datetime_diff", start="2025-02-30", end="2025-03-01")
    assert res.status is ToolStatus.ERROR and "'2025-02-30'" in res.output
    res = await drun("datetime_diff", start="9999-12-01", add="2 months")
    assert res.status is ToolStatus.ERROR and "outside the calendar" in res.output
