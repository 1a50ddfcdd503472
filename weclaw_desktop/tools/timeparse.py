"""Reading time zones, moments and durations the way users write them (English and Chinese).

Zones: IANA names (``Asia/Shanghai``), city names (``Tokyo``, ``纽约``), common abbreviations (``PST``)
and UTC offsets (``UTC+8``). Moments: ISO 8601, ``now``/``today``/``tomorrow`` (also 现在/今天/明天),
``3 weeks from today``, ``2 days ago``, ``2025年3月5日 14:30`` and what dateutil's parser reads
(``March 5 2025 3pm``). Durations: ``3 weeks``, ``1h30m``, ``-90 minutes``, ``2天4小时``.
"""

from __future__ import annotations

import difflib
import functools
import os
import re
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, available_timezones

from dateutil import parser as dateparser
from dateutil.relativedelta import relativedelta


class TimeInputError(ValueError):
    """Input that cannot be read; the message says what is accepted."""


ALIASES: dict[str, str] = {
    # Chinese place names
    "北京": "Asia/Shanghai", "上海": "Asia/Shanghai", "中国": "Asia/Shanghai", "深圳": "Asia/Shanghai",
    "广州": "Asia/Shanghai", "香港": "Asia/Hong_Kong", "台北": "Asia/Taipei", "澳门": "Asia/Macau",
    "东京": "Asia/Tokyo", "日本": "Asia/Tokyo", "首尔": "Asia/Seoul", "韩国": "Asia/Seoul",
    "新加坡": "Asia/Singapore", "曼谷": "Asia/Bangkok", "迪拜": "Asia/Dubai", "印度": "Asia/Kolkata",
    "纽约": "America/New_York", "华盛顿": "America/New_York", "洛杉矶": "America/Los_Angeles",
    "旧金山": "America/Los_Angeles", "西雅图": "America/Los_Angeles", "芝加哥": "America/Chicago",
    "多伦多": "America/Toronto", "温哥华": "America/Vancouver", "伦敦": "Europe/London", "英国": "Europe/London",
    "巴黎": "Europe/Paris", "法国": "Europe/Paris", "柏林": "Europe/Berlin", "德国": "Europe/Berlin",
    "莫斯科": "Europe/Moscow", "悉尼": "Australia/Sydney", "墨尔本": "Australia/Melbourne",
    "奥克兰": "Pacific/Auckland",
    # English names that are not the last part of an IANA name
    "beijing": "Asia/Shanghai", "china": "Asia/Shanghai", "japan": "Asia/Tokyo", "korea": "Asia/Seoul",
    "india": "Asia/Kolkata", "mumbai": "Asia/Kolkata", "delhi": "Asia/Kolkata", "san francisco": "America/Los_Angeles",
    "seattle": "America/Los_Angeles", "washington": "America/New_York", "boston": "America/New_York",
    "uk": "Europe/London", "england": "Europe/London", "germany": "Europe/Berlin", "france": "Europe/Paris",
    # abbreviations (CST is left out on purpose: China, US Central and Cuba all use it)
    "utc": "UTC", "gmt": "UTC", "z": "UTC", "est": "America/New_York", "edt": "America/New_York",
    "et": "America/New_York", "pst": "America/Los_Angeles", "pdt": "America/Los_Angeles",
    "pt": "America/Los_Angeles", "mst": "America/Denver", "mdt": "America/Denver", "cdt": "America/Chicago",
    "bst": "Europe/London", "cet": "Europe/Paris", "cest": "Europe/Paris", "jst": "Asia/Tokyo",
    "kst": "Asia/Seoul", "ist": "Asia/Kolkata", "bjt": "Asia/Shanghai", "hkt": "Asia/Hong_Kong",
    "aest": "Australia/Sydney", "sgt": "Asia/Singapore",
}  # fmt: skip

AMBIGUOUS = {"cst": "China Standard Time is Asia/Shanghai; US Central Time is America/Chicago"}
_OFFSET = re.compile(r"^(?:utc|gmt)?\s*([+-])\s*(\d{1,2})(?::?(\d{2}))?$", re.I)


@functools.cache
def _zone_names() -> tuple[frozenset[str], dict[str, str]]:
    """All IANA names, and city name (``new york``) -> IANA name."""
    names = frozenset(n for n in available_timezones() if not n.startswith(("posix/", "right/")))
    cities: dict[str, str] = {}
    for name in sorted(names):
        if "/" in name and not name.startswith("Etc/"):
            cities.setdefault(name.rsplit("/", 1)[1].replace("_", " ").lower(), name)
    return names, cities


def local_zone(configured: str = "") -> tzinfo:
    """The configured zone, else the system's IANA zone when it can be found, else its fixed offset."""
    if configured:
        return resolve_zone(configured)
    for candidate in (os.environ.get("TZ", "").lstrip(":"), _tzlocal_name(), _etc_localtime()):
        if candidate and candidate in _zone_names()[0]:
            return ZoneInfo(candidate)
    return datetime.now().astimezone().tzinfo or UTC


def _tzlocal_name() -> str:
    """The IANA name of the system zone via tzlocal (which also reads Windows' zone and maps it)."""
    try:
        from tzlocal import get_localzone_name

        return get_localzone_name() or ""
    except Exception:  # tzlocal missing or the system zone is not configured
        return ""


def _etc_localtime() -> str:
    try:
        target = str(Path("/etc/localtime").resolve())
    except OSError:
        return ""
    return target.split("zoneinfo/", 1)[1] if "zoneinfo/" in target else ""


def zone_label(tz: tzinfo) -> str:
    key = getattr(tz, "key", None)
    return str(key) if key else (datetime.now(tz).tzname() or "local")


def resolve_zone(name: str | None, *, default: tzinfo | None = None) -> tzinfo:
    """A tzinfo for what the user wrote, or :class:`TimeInputError` with close suggestions."""
    text = (name or "").strip()
    if not text or text.lower() in ("local", "本地", "here"):
        return default if default is not None else local_zone()
    names, cities = _zone_names()
    if text in names:
        return ZoneInfo(text)
    lowered = text.lower()
    by_lower = {n.lower(): n for n in names}
    if lowered in by_lower:
        return ZoneInfo(by_lower[lowered])
    alias = ALIASES.get(text) or ALIASES.get(lowered)
    if alias:
        return ZoneInfo(alias)
    city = cities.get(lowered.replace("_", " "))
    if city:
        return ZoneInfo(city)
    offset = _OFFSET.match(text)
    if offset:
        sign, hours, minutes = offset.group(1), int(offset.group(2)), int(offset.group(3) or 0)
        if hours > 14 or minutes >= 60:
            raise TimeInputError(f"'{text}' is not a valid UTC offset (the range is UTC-12 to UTC+14).")
        delta = timedelta(hours=hours, minutes=minutes)
        return timezone(-delta if sign == "-" else delta)
    if lowered in AMBIGUOUS:
        raise TimeInputError(f"'{text}' is ambiguous: {AMBIGUOUS[lowered]}. Say which one.")
    pool = list(names) + list(cities)
    close = difflib.get_close_matches(lowered, [p.lower() for p in pool], n=4, cutoff=0.6)
    suggestions = []
    for c in close:
        full = by_lower.get(c) or cities.get(c)
        if full and full not in suggestions:
            suggestions.append(full)
    hint = f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""
    raise TimeInputError(
        f"Unknown time zone '{text}'.{hint} Use an IANA name such as Asia/Shanghai, America/New_York or "
        "Europe/London, a city name, or an offset such as UTC+8."
    )


# --- durations -------------------------------------------------------------------------------------

_UNITS: dict[str, str] = {}
for _unit, _words in {
    "years": "y yr yrs year years 年",
    "months": "mo mon month months 月 个月",
    "weeks": "w wk wks week weeks 周 星期 礼拜 个星期 个礼拜",
    "days": "d day days 天 日",
    "hours": "h hr hrs hour hours 小时 个小时 时 钟头 个钟头",
    "minutes": "m min mins minute minutes 分 分钟",
    "seconds": "s sec secs second seconds 秒 秒钟",
}.items():
    for _w in _words.split():
        _UNITS[_w] = _unit
_UNIT_RE = "|".join(sorted((re.escape(w) for w in _UNITS), key=len, reverse=True))
_DURATION_PART = re.compile(rf"([+-]?\s*\d+(?:\.\d+)?)\s*({_UNIT_RE})(?![a-z])", re.I)
_CN_DIGITS = {
    "一": 1,
    "两": 2,
    "二": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
    "十": 10,
    "半": 0.5,
}


def parse_duration(text: str) -> relativedelta:
    """``3 weeks``, ``1h30m``, ``-2 days 4 hours``, ``两周``; a leading minus negates all of it."""
    raw = text.strip().lower()
    for word in ("and", ",", "，", "又", "零"):
        raw = raw.replace(word, " ")
    raw = re.sub(
        r"(?<![\d.])([一两二三四五六七八九十半])(?=\s*[个年月周星礼天日小时分秒钟])",
        lambda m: str(_CN_DIGITS[m.group(1)]),
        raw,
    )
    negate = raw.startswith("-") and raw.count("-") == 1
    if negate:
        raw = raw[1:]
    parts = list(_DURATION_PART.finditer(raw))
    leftover = _DURATION_PART.sub("", raw).strip()
    if not parts or leftover:
        raise TimeInputError(
            f"Could not read '{text}' as a duration. Write it like '3 weeks', '2 days 4 hours', '90 minutes', "
            "'1h30m' or '-10 days' (a minus sign subtracts)."
        )
    total = relativedelta()
    for match in parts:
        number = float(match.group(1).replace(" ", ""))
        amount: float | int = int(number) if number.is_integer() else number
        unit = _UNITS[match.group(2).lower()] if match.group(2).lower() in _UNITS else _UNITS[match.group(2)]
        if unit in ("years", "months"):
            if amount != int(amount):
                raise TimeInputError(f"'{match.group(0)}': years and months must be whole numbers.")
            total += relativedelta(**{unit: int(amount)})
        elif unit == "weeks":
            total += relativedelta(days=amount * 7)
        else:
            total += relativedelta(**{unit: amount})
    if abs(total.years) > 10_000 or abs(total.days) > 4_000_000:
        raise TimeInputError(f"'{text}' is too long a duration (at most 10000 years).")
    return -total if negate else total


def describe_duration(delta: relativedelta) -> str:
    parts = []
    for unit in ("years", "months", "days", "hours", "minutes", "seconds"):
        value = getattr(delta, unit)
        if value:
            parts.append(f"{value:g} {unit[:-1] if abs(value) == 1 else unit}")
    return ", ".join(parts) or "0 seconds"


# --- moments ---------------------------------------------------------------------------------------

_DAY_WORDS = {
    "now": 0, "现在": 0, "today": 0, "今天": 0, "今日": 0, "tomorrow": 1, "明天": 1, "yesterday": -1,
    "昨天": -1, "后天": 2, "前天": -2, "大后天": 3,
}  # fmt: skip
_RELATIVE_FROM = re.compile(r"^(.+?)\s+(?:from|after)\s+(.+)$", re.I)
_RELATIVE_AGO = re.compile(r"^(.+?)\s*(?:ago|before now|以前|之前|前)$", re.I)
_RELATIVE_IN = re.compile(r"^(?:in\s+(.+)|(.+?)\s*(?:later|以后|之后|后))$", re.I)
_CN_DATE = re.compile(r"(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]?")
_CN_TIME = re.compile(r"(上午|下午|晚上|早上|中午|凌晨)?\s*(\d{1,2})\s*[点时:：]\s*(?:(\d{1,2})\s*分?|半)?")


def parse_moment(text: str | None, tz: tzinfo, *, now: datetime | None = None) -> tuple[datetime, bool]:
    """An aware datetime in ``tz`` and whether the input named only a date (no time of day)."""
    current = (now or datetime.now(tz)).astimezone(tz)
    raw = " ".join((text or "").split())
    lowered = raw.lower()
    if not raw or lowered in ("now", "现在", "此刻"):
        return current, False
    if lowered in _DAY_WORDS:
        day = (current + timedelta(days=_DAY_WORDS[lowered])).date()
        return datetime.combine(day, datetime.min.time(), tz), True
    for pattern, sign in ((_RELATIVE_AGO, -1), (_RELATIVE_IN, 1)):
        match = pattern.match(raw)
        if match:
            amount = next(g for g in match.groups() if g)
            try:
                return current + parse_duration(amount) * sign, False
            except TimeInputError:
                break
    match = _RELATIVE_FROM.match(raw)
    if match:
        try:
            delta = parse_duration(match.group(1))
        except TimeInputError:
            delta = None
        if delta is not None:
            base, date_only = parse_moment(match.group(2), tz, now=current)
            return base + delta, date_only
    try:
        parsed = datetime.fromisoformat(raw)
        return _attach(parsed, tz), "T" not in raw.upper() and ":" not in raw
    except ValueError:
        pass
    cn = _parse_chinese(raw, current)
    if cn is not None:
        return cn
    try:
        default = current.replace(hour=0, minute=0, second=0, microsecond=0, tzinfo=None)
        parsed = dateparser.parse(raw, default=default)
    except (ValueError, OverflowError) as exc:
        reason = f" ({exc})" if "range" in str(exc) else ""
        raise TimeInputError(
            f"Could not read '{text}' as a date or time{reason}. Use a form like 2025-03-05, 2025-03-05 14:30, "
            "March 5 2025 3pm, 2025年3月5日 14:30, tomorrow, or '3 weeks from today'."
        ) from None
    has_time = bool(re.search(r"\d:\d|\d\s*(?:am|pm)\b", lowered))
    return _attach(parsed, tz), not has_time


def _attach(value: datetime, tz: tzinfo) -> datetime:
    """Naive times are read in ``tz``; times with an offset are converted to it."""
    return value.replace(tzinfo=tz) if value.tzinfo is None else value.astimezone(tz)


def _parse_chinese(raw: str, current: datetime) -> tuple[datetime, bool] | None:
    day: date | None = None
    rest = raw
    for word, offset in sorted(_DAY_WORDS.items(), key=lambda kv: -len(kv[0])):
        if not word.isascii() and raw.startswith(word) and word not in ("现在",):
            day = (current + timedelta(days=offset)).date()
            rest = raw[len(word) :]
            break
    if day is None:
        match = _CN_DATE.search(raw)
        if match is None:
            return None
        year = int(match.group(1) or current.year)
        try:
            day = date(year, int(match.group(2)), int(match.group(3)))
        except ValueError as exc:
            raise TimeInputError(f"'{raw}' is not a real date ({exc}).") from None
        rest = raw[match.end() :]
    time_match = _CN_TIME.search(rest)
    if time_match is None:
        if rest.strip():
            return None
        return datetime.combine(day, datetime.min.time(), current.tzinfo), True
    hour = int(time_match.group(2))
    minute = 30 if time_match.group(0).endswith("半") else int(time_match.group(3) or 0)
    if time_match.group(1) in ("下午", "晚上") and hour < 12:
        hour += 12
    if time_match.group(1) == "中午" and hour < 11:
        hour += 12
    if hour > 23 or minute > 59:
        raise TimeInputError(f"'{raw}' has an invalid time of day.")
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=current.tzinfo), False
