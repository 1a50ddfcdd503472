"""Times that the todo and reminder tools accept from the model, and how they show them (schedule times).

Stored times are UTC epoch seconds; what users and the model see is local time. The local zone is an IANA
zone (tzlocal finds the system's), so cron schedules keep their wall-clock time across DST changes.

Accepted forms:
- absolute: ISO 8601 (``2026-12-01 09:00``, ``2026-12-01T09:00:00+08:00``), a date alone
  (``2026-12-01``), a time alone (``09:30``: the next time the clock shows it);
- relative: ``in 20 minutes``, ``20m``, ``1h30m``, ``1.5 hours``, ``PT20M``, ``20分钟``, ``1小时30分钟后``,
  ``半小时``, ``2天``.
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_UNITS: dict[str, float] = {}
for _names, _seconds in (
    (("s", "sec", "secs", "second", "seconds", "秒", "秒钟"), 1),
    (("m", "min", "mins", "minute", "minutes", "分", "分钟"), 60),
    (("h", "hr", "hrs", "hour", "hours", "小时", "个小时", "钟头", "个钟头", "时"), 3600),
    (("d", "day", "days", "天", "日"), 86400),
    (("w", "wk", "week", "weeks", "周", "个星期", "星期", "礼拜", "个礼拜"), 7 * 86400),
):
    for _n in _names:
        _UNITS[_n] = _seconds

_UNIT_RE = "|".join(sorted((re.escape(u) for u in _UNITS), key=len, reverse=True))
_PART = re.compile(rf"(\d+(?:\.\d+)?)\s*({_UNIT_RE})(?![a-z])", re.IGNORECASE)
_ISO_DURATION = re.compile(
    r"^P(?:(?P<d>\d+(?:\.\d+)?)D)?(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?$",
    re.IGNORECASE,
)
_HHMM = re.compile(r"^(\d{1,2})[:：](\d{2})$")
_RELATIVE_HINT = re.compile(r"^(in|after)\s+|\s*(later|from now|后|以后|之后)$", re.IGNORECASE)


class TimeParseError(ValueError):
    """The text is not a time or duration we understand; the message says what is accepted."""


@functools.cache
def local_zone(name: str = "") -> tzinfo:
    """The zone called ``name``, or the system's zone when ``name`` is empty (UTC if unknown)."""
    if name:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise TimeParseError(f"unknown time zone '{name}' (use an IANA name such as Asia/Shanghai)") from exc
    try:
        import tzlocal

        return ZoneInfo(tzlocal.get_localzone_name() or "UTC")
    except Exception:  # no zone configured on this machine: a fixed offset is the best we have
        return datetime.now().astimezone().tzinfo or UTC


def zone_name(tz: tzinfo) -> str:
    return getattr(tz, "key", None) or str(tz)


def parse_duration(text: str) -> timedelta:
    """``20m``, ``1h30m``, ``in 2 hours``, ``PT20M``, ``20分钟后``, ``半小时`` -> a positive timedelta."""
    raw = text.strip()
    s = _RELATIVE_HINT.sub("", raw).strip()
    s = s.replace("半小时", "30分钟").replace("半个小时", "30分钟").replace("一刻钟", "15分钟")
    iso = _ISO_DURATION.match(s)
    if iso and any(iso.groupdict().values()):
        parts = {k: float(v) for k, v in iso.groupdict().items() if v}
        delta = timedelta(
            days=parts.get("d", 0), hours=parts.get("h", 0), minutes=parts.get("m", 0), seconds=parts.get("s", 0)
        )
    else:
        matches = list(_PART.finditer(s))
        leftover = _PART.sub("", s)
        leftover = re.sub(r"(?:\s|,|，|和|又|\band\b)+", "", leftover, flags=re.IGNORECASE)
        if not matches or leftover:
            raise TimeParseError(
                f"'{raw}' is not a duration; write it like '20 minutes', '1h30m', '2 days' or '20分钟'"
            )
        delta = timedelta(seconds=sum(float(m.group(1)) * _UNITS[m.group(2).lower()] for m in matches))
    if delta <= timedelta(0):
        raise TimeParseError(f"the duration '{raw}' must be longer than zero")
    return delta


def parse_datetime(text: str, tz: tzinfo, now: datetime | None = None) -> tuple[datetime, bool]:
    """An absolute time as an aware datetime in ``tz``, and whether the text named a time of day.

    A naive ISO time is local to ``tz``; one with an offset keeps it. ``09:30`` alone is the next time
    the clock shows it. Relative phrases (``in 20 minutes``) are accepted as well.
    """
    raw = text.strip()
    current = (now or datetime.now(UTC)).astimezone(tz)
    if not raw:
        raise TimeParseError("the time is empty")
    hhmm = _HHMM.match(raw)
    if hhmm:
        hour, minute = int(hhmm.group(1)), int(hhmm.group(2))
        if hour > 23 or minute > 59:
            raise TimeParseError(f"'{raw}' is not a time of day")
        candidate = datetime.combine(current.date(), time(hour, minute), tzinfo=tz)
        if candidate <= current:
            candidate = datetime.combine(current.date() + timedelta(days=1), time(hour, minute), tzinfo=tz)
        return candidate, True
    try:
        value = datetime.fromisoformat(raw.replace("Z", "+00:00") if raw.endswith("Z") else raw)
    except ValueError:
        value = None
    if value is not None:
        has_time = not re.fullmatch(r"\d{4}-?\d{2}-?\d{2}", raw)
        if value.tzinfo is None:
            value = value.replace(tzinfo=tz)
        return value.astimezone(tz), has_time
    try:
        return current + parse_duration(raw), True
    except TimeParseError:
        pass
    raise TimeParseError(
        f"'{raw}' is not a time I understand; use ISO 8601 local time like '2026-12-01 09:00', "
        "a date '2026-12-01', a time '09:30', or a delay like 'in 20 minutes'"
    )


def to_epoch(value: datetime) -> float:
    return value.astimezone(UTC).timestamp()


def from_epoch(ts: float, tz: tzinfo) -> datetime:
    return datetime.fromtimestamp(ts, UTC).astimezone(tz)


def format_local(ts: float, tz: tzinfo, *, with_time: bool = True) -> str:
    """``2026-12-01 09:00 (Tue)`` in ``tz``."""
    value = from_epoch(ts, tz)
    return value.strftime("%Y-%m-%d %H:%M (%a)" if with_time else "%Y-%m-%d (%a)")


def end_of_day(day: date, tz: tzinfo) -> datetime:
    return datetime.combine(day, time(23, 59, 59), tzinfo=tz)
