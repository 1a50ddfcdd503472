"""The datetime tool: the time now in any zone, converting between zones, differences and date arithmetic.

Zones come from zoneinfo with the tzdata package as the database where the OS has none (Windows).
"""

from __future__ import annotations

import asyncio
from datetime import date, datetime, timedelta, tzinfo
from typing import Any

from dateutil.relativedelta import relativedelta
from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.toolkit import BaseTool, ToolContext, ToolError, ToolResult, action
from weclaw_desktop.tools.timeparse import (
    TimeInputError,
    describe_duration,
    local_zone,
    parse_duration,
    parse_moment,
    resolve_zone,
    zone_label,
)

WEEKDAYS_ZH = ("星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日")
ZONE_HELP = "An IANA time zone (Asia/Shanghai), a city (Tokyo, 纽约), an offset (UTC+8); empty = the user's zone"


class DateTimeConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timezone: str = Field(default="", description="The user's time zone; empty = the system's")


class NowParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timezone: str | None = Field(default=None, max_length=64, description=ZONE_HELP)


class ConvertParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    time: str = Field(
        default="now",
        max_length=100,
        description="The time to convert: 2025-03-05 14:30, 'tomorrow 9am', 'now' (default)",
    )
    from_zone: str | None = Field(default=None, max_length=64, description="Zone the time is in. " + ZONE_HELP)
    to_zones: list[str] = Field(
        min_length=1, max_length=12, description="One or more zones to convert to (IANA names, cities or offsets)"
    )


class DiffParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    start: str = Field(
        default="today",
        max_length=100,
        description="The first date/time: 2025-03-05, 'now', 'today' (default), '2025年10月1日'",
    )
    end: str | None = Field(
        default=None, max_length=100, description="The second date/time: give it to get the time between the two"
    )
    add: str | None = Field(
        default=None,
        max_length=100,
        description="A duration to add to start instead: '3 weeks', '2 days 4 hours', '-10 days' (minus subtracts)",
    )
    timezone: str | None = Field(default=None, max_length=64, description=ZONE_HELP)


def describe(moment: datetime, *, date_only: bool = False) -> dict[str, Any]:
    offset = moment.utcoffset() or timedelta()
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    out: dict[str, Any] = {
        "iso": moment.date().isoformat() if date_only else moment.isoformat(timespec="seconds"),
        "weekday": moment.strftime("%A"),
        "weekday_zh": WEEKDAYS_ZH[moment.weekday()],
        "timezone": zone_label(moment.tzinfo) if moment.tzinfo else "local",
        "utc_offset": f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}",
    }
    if not date_only:
        out["unix"] = int(moment.timestamp())
    return out


def show(moment: datetime, *, date_only: bool = False) -> str:
    d = describe(moment, date_only=date_only)
    stamp = moment.strftime("%Y-%m-%d") if date_only else moment.strftime("%Y-%m-%d %H:%M:%S")
    zone = "" if date_only else f" {d['timezone']} ({d['utc_offset']})"
    return f"{stamp} {d['weekday']}{zone}"


def weekdays_between(a: date, b: date) -> int:
    """Monday-to-Friday days from a (included) to b (excluded)."""
    if b < a:
        return -weekdays_between(b, a)
    days = (b - a).days
    full, rest = divmod(days, 7)
    count = full * 5
    for i in range(rest):
        if (a.weekday() + i) % 7 < 5:
            count += 1
    return count


class DateTimeTool(BaseTool):
    Config = DateTimeConfig

    def _zone(self, name: str | None) -> tzinfo:
        return resolve_zone(name, default=local_zone(self.config.timezone))

    @action(
        "Current date, time and weekday, in the user's time zone or any other zone. Use it whenever the "
        "answer depends on today's date or the current time."
    )
    async def now(self, params: NowParams, ctx: ToolContext) -> ToolResult:
        def work() -> ToolResult:
            tz = self._zone(params.timezone)
            moment = datetime.now(tz)
            data = describe(moment)
            data.update(iso_week=moment.isocalendar().week, day_of_year=moment.timetuple().tm_yday)
            return ToolResult.ok(f"Now: {show(moment)}, week {data['iso_week']}", data=data)

        return await _run(work)

    @action(
        "Convert a time from one time zone to others, e.g. '9:00 tomorrow in Beijing' to New York and London. "
        "Use it for meetings and calls across time zones."
    )
    async def convert(self, params: ConvertParams, ctx: ToolContext) -> ToolResult:
        def work() -> ToolResult:
            source = self._zone(params.from_zone)
            moment, _ = parse_moment(params.time, source)
            targets = [(name, resolve_zone(name)) for name in params.to_zones]
            lines = [f"{show(moment)}"]
            converted = []
            for name, tz in targets:
                there = moment.astimezone(tz)
                lines.append(f"= {show(there)}" + (f"  [{name}]" if zone_label(tz) != name else ""))
                converted.append({"zone": name, **describe(there)})
            return ToolResult.ok("\n".join(lines), data={"from": describe(moment), "to": converted})

        return await _run(work)

    @action(
        "Date arithmetic: the time between two dates or times (days, weeks, calendar months and years, weekdays), "
        "or a date plus or minus a duration ('3 weeks from today', '90 days before 2025-12-31'). "
        "Give start with either end or add."
    )
    async def diff(self, params: DiffParams, ctx: ToolContext) -> ToolResult:
        if (params.end is None) == (params.add is None):
            raise ToolError(
                "Give either end (to get the time between start and end) or add (to shift start by a duration), "
                "not both and not neither."
            )

        def work() -> ToolResult:
            tz = self._zone(params.timezone)
            start, start_date_only = parse_moment(params.start, tz)
            if params.add is not None:
                delta = parse_duration(params.add)
                try:
                    result = start + delta
                except (OverflowError, ValueError):
                    raise TimeInputError(f"'{params.add}' from {show(start, date_only=True)} is outside the calendar.")  # noqa: B904
                date_only = start_date_only and not (delta.hours or delta.minutes or delta.seconds)
                text = f"{show(start, date_only=date_only)} {'+' if _positive(delta) else '-'} " + (
                    f"{describe_duration(abs(delta))} = {show(result, date_only=date_only)}"
                )
                return ToolResult.ok(
                    text,
                    data={
                        "start": describe(start, date_only=date_only),
                        "result": describe(result, date_only=date_only),
                    },
                )
            end, end_date_only = parse_moment(params.end, tz)
            both_dates = start_date_only and end_date_only
            seconds = (end - start).total_seconds()
            calendar = relativedelta(end, start)
            days = seconds / 86400
            weekdays = weekdays_between(start.date(), end.date())
            data: dict[str, Any] = {
                "start": describe(start, date_only=start_date_only),
                "end": describe(end, date_only=end_date_only),
                "total_days": round(days, 4),
                "total_weeks": round(days / 7, 4),
                "total_hours": round(seconds / 3600, 4),
                "total_seconds": int(seconds),
                "calendar": describe_duration(calendar),
                "weekdays": weekdays,
            }
            direction = "after" if seconds >= 0 else "before"
            span = f"{abs(days):g} days" if both_dates else f"{abs(seconds) / 3600:,.2f} hours ({abs(days):,.2f} days)"
            text = (
                f"From {show(start, date_only=start_date_only)} to {show(end, date_only=end_date_only)}: {span}, "
                f"{describe_duration(abs(calendar))}; {abs(weekdays)} weekdays (Mon-Fri). "
                f"The end is {direction} the start."
            )
            return ToolResult.ok(text, data=data)

        return await _run(work)


def _positive(delta: relativedelta) -> bool:
    anchor = datetime(2000, 1, 1)
    shifted: datetime = anchor + delta
    return shifted >= anchor


async def _run(work: Any) -> ToolResult:
    """Run parsing off the loop (the zone list is read from disk once) and turn input errors into ToolError."""
    try:
        result: ToolResult = await asyncio.to_thread(work)
    except TimeInputError as exc:
        raise ToolError(str(exc)) from None
    return result
