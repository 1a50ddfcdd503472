"""Reading time zones, moments and durations the way users write them (English and Chinese).

The one parser for every tool that reads times (datetime, reminder, todo).

Zones: IANA names (``Asia/Shanghai``), city names (``Tokyo``, ``纽约``), common abbreviations (``PST``)
and UTC offsets (``UTC+8``). Moments: ISO 8601, ``now``/``today``/``tomorrow`` (also 现在/今天/明天),
``3 weeks from today``, ``2 days ago``, ``2025年3月5日 14:30``, ``明天 下午3点``, ``tomorrow 9am`` and what
dateutil's parser reads (``March 5 2025 3pm``). Durations: ``3 weeks``, ``1h30m``, ``-90 minutes``,
``2天4小时``, ``半小时``, ``一刻钟``, ``两个钟头``, ``二十分钟``, ISO 8601 ``PT20M``/``P1DT2H``.

Two readings of a duration: :func:`parse_duration` (calendar arithmetic: months, years, negative) and
:func:`parse_delay` (a positive fixed-length wait: ``in 20 minutes``, ``20分钟后``). Schedules (reminders,
to-do due dates) go through :func:`parse_schedule_time`, where a time alone means the next time the clock
shows it; their times are stored as UTC epoch seconds (:func:`to_epoch`) and shown in local time
(:func:`format_local`).
"""

from __future__ import annotations

import difflib
import functools
import os
import re
from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo
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
        try:
            return resolve_zone(configured)
        except TimeInputError as exc:
            raise TimeInputError(f"unknown time zone in the settings: {exc}") from None
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
    """The IANA name of ``tz`` (what :func:`resolve_zone` reads back), else its current abbreviation."""
    key = getattr(tz, "key", None)
    return str(key) if key else (datetime.now(tz).tzname() or "local")


def resolve_zone(name: str | None, *, default: tzinfo | None = None) -> tzinfo:
    """A tzinfo for what the user wrote, or :class:`TimeInputError` with close suggestions."""
    text = (name or "").strip()
    if not text or text.lower() in ("local", "本地", "here"):
        return default if default is not None else local_zone()
    names, cities = _zone_names()
    if not names:  # no database at all: the name may be right, the machine lacks tzdata
        raise TimeInputError(
            f"No time zone database on this computer, so '{text}' cannot be looked up: install the tzdata "
            "package (or `pip install tzdata`), or give an offset such as UTC+8."
        )
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

# word -> (unit, how many of that unit one of the word is)
_UNITS: dict[str, tuple[str, int]] = {}
for _unit, _words in {
    "years": "y yr yrs year years 年",
    "months": "mo mon month months 月 个月",
    "weeks": "w wk wks week weeks 周 个周 星期 礼拜 个星期 个礼拜",
    "days": "d day days 天 日",
    "hours": "h hr hrs hour hours 小时 个小时 时 钟头 个钟头",
    "minutes": "m min mins minute minutes 分 分钟",
    "seconds": "s sec secs second seconds 秒 秒钟",
}.items():
    for _w in _words.split():
        _UNITS[_w] = (_unit, 1)
_UNITS.update({"刻": ("minutes", 15), "刻钟": ("minutes", 15)})  # 一刻钟 = a quarter of an hour
_SECONDS = {"weeks": 604_800, "days": 86_400, "hours": 3_600, "minutes": 60, "seconds": 1}
_UNIT_RE = "|".join(sorted((re.escape(w) for w in _UNITS), key=len, reverse=True))
_DURATION_PART = re.compile(rf"([+-]?\s*\d+(?:\.\d+)?)\s*({_UNIT_RE})(?![a-z])", re.I)
_NUM = r"(\d+(?:\.\d+)?)"
_ISO_DURATION = re.compile(
    rf"^p(?:{_NUM}y)?(?:{_NUM}m)?(?:{_NUM}w)?(?:{_NUM}d)?(?:t(?:{_NUM}h)?(?:{_NUM}m)?(?:{_NUM}s)?)?$", re.I
)
_ISO_UNITS = ("years", "months", "weeks", "days", "hours", "minutes", "seconds")
_CN_DIGITS = {"零": 0, "一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CN_NUMBER = re.compile(r"(?<![\d.])([零一两二三四五六七八九十百]+|半)(?=\s*(?:个|[年月周星礼天日小时分秒钟刻]))")
_DELAY_HINT = re.compile(r"^(?:in|after)\s+|\s*(?:later|from now|以后|之后|后)$", re.I)


def _cn_number(word: str) -> str:
    """``半`` -> 0.5, ``两`` -> 2, ``十五`` -> 15, ``二十`` -> 20, ``一百零五`` -> 105."""
    if word == "半":
        return "0.5"
    total = current = 0
    for ch in word:
        if ch in "十百":
            total += (current or 1) * (10 if ch == "十" else 100)
            current = 0
        else:
            current = _CN_DIGITS[ch]
    return str(total + current)


def _duration_terms(text: str) -> list[tuple[str, float]] | None:
    """``(unit, signed amount)`` for every part of a duration, or None when the text is not one."""
    raw = text.strip().lower()
    negate = raw.startswith("-") and raw.count("-") == 1
    if negate:
        raw = raw[1:].strip()
    iso = _ISO_DURATION.match(raw)
    if iso and any(iso.groups()):
        terms = [(unit, float(v)) for unit, v in zip(_ISO_UNITS, iso.groups(), strict=True) if v]
    else:
        raw = re.sub(r"个半(小时|钟头)", r"\1又半\1", raw)  # 两个半小时 = 2.5 hours
        raw = _CN_NUMBER.sub(lambda m: _cn_number(m.group(1)), raw)
        raw = re.sub(r"\band\b|[,，和又零]", " ", raw)
        parts = list(_DURATION_PART.finditer(raw))
        if not parts or _DURATION_PART.sub("", raw).strip():
            return None
        terms = []
        for match in parts:
            unit, factor = _UNITS[match.group(2).lower()]
            terms.append((unit, float(match.group(1).replace(" ", "")) * factor))
    return [(unit, -amount) for unit, amount in terms] if negate else terms


def parse_duration(text: str) -> relativedelta:
    """``3 weeks``, ``1h30m``, ``-2 days 4 hours``, ``两周``, ``P1M``; a leading minus negates all of it."""
    terms = _duration_terms(text)
    if terms is None:
        raise TimeInputError(
            f"Could not read '{text}' as a duration. Write it like '3 weeks', '2 days 4 hours', '90 minutes', "
            "'1h30m', '半小时' or '-10 days' (a minus sign subtracts)."
        )
    total, seconds = relativedelta(), 0.0
    for unit, number in terms:
        if unit in ("years", "months"):
            if not number.is_integer():
                raise TimeInputError(f"'{text.strip()}': years and months must be whole numbers.")
            total += relativedelta(**{unit: int(number)})
        else:
            seconds += number * _SECONDS[unit]
    whole = int(seconds)  # relativedelta carries seconds over into minutes, hours and days: 半小时 = 30 minutes
    total += relativedelta(seconds=whole, microseconds=round((seconds - whole) * 1_000_000))
    if abs(total.years) > 10_000 or abs(total.days) > 4_000_000:
        raise TimeInputError(f"'{text}' is too long a duration (at most 10000 years).")
    return total


def parse_delay(text: str) -> timedelta:
    """A positive wait: ``20m``, ``in 2 hours``, ``PT20M``, ``20分钟后``, ``一刻钟`` -> a timedelta."""
    raw = text.strip()
    terms = _duration_terms(_DELAY_HINT.sub("", raw))
    if terms is None:
        raise TimeInputError(
            f"'{raw}' is not a duration; write it like '20 minutes', '1h30m', '2 days', 'PT20M' or '20分钟'"
        )
    if any(unit in ("years", "months") for unit, _ in terms):
        raise TimeInputError(f"'{raw}' counts months or years, which vary in length; give the date instead")
    try:
        delta = timedelta(seconds=sum(amount * _SECONDS[unit] for unit, amount in terms))
    except OverflowError:
        raise TimeInputError(f"the duration '{raw}' is too long") from None
    if delta <= timedelta(0):
        raise TimeInputError(f"the duration '{raw}' must be longer than zero")
    return delta


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
_AMPM = re.compile(r"(?<!\d)(\d{1,2})(?:[:：](\d{2}))?\s*([ap])\.?m\b\.?", re.I)


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
        return _attach(parsed, tz), not re.search(r"\d[T ]\d", raw, re.I)  # 2025-03-05 09 has a time
    except ValueError:
        pass
    cn = _parse_day_and_time(raw, current)
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


def _clock(text: str, *, whole: bool) -> tuple[int, int] | None:
    """Hour and minute of ``14:30``, ``下午3点半``, ``3pm``, ``9:15 am`` (``whole``: nothing else around it)."""
    for pattern in (_AMPM, _CN_TIME):  # am/pm first: 9:15 pm is not 9:15
        match = pattern.fullmatch(text) if whole else pattern.search(text)
        if match is None:
            continue
        hour = int(match.group(2) if pattern is _CN_TIME else match.group(1))
        if pattern is _AMPM:
            minute = int(match.group(2) or 0)
            if not 1 <= hour <= 12:
                raise TimeInputError(f"'{text}' has an invalid time of day.")
            hour = hour % 12 + (12 if match.group(3).lower() == "p" else 0)
        else:
            minute = 30 if match.group(0).endswith("半") else int(match.group(3) or 0)
            if match.group(1) in ("下午", "晚上") and hour < 12:
                hour += 12
            if match.group(1) == "中午" and hour < 11:
                hour += 12
        if hour > 23 or minute > 59:
            raise TimeInputError(f"'{text}' has an invalid time of day.")
        return hour, minute
    return None


def _parse_day_and_time(raw: str, current: datetime) -> tuple[datetime, bool] | None:
    """``明天 9点``, ``tomorrow 3pm``, ``2025年3月5日 下午3点半``, ``3月5日``."""
    day: date | None = None
    rest = raw
    for word, offset in sorted(_DAY_WORDS.items(), key=lambda kv: -len(kv[0])):
        if word in ("now", "现在"):
            continue
        if (word.isascii() and raw.lower().startswith(word + " ")) or (not word.isascii() and raw.startswith(word)):
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
    rest = re.sub(r"^\s*at\s+", "", rest, flags=re.I)  # tomorrow at 9am
    clock = _clock(rest.strip(), whole=False) if rest.strip() else None
    if clock is None:
        if rest.strip():
            return None
        return datetime.combine(day, datetime.min.time(), current.tzinfo), True
    return datetime.combine(day, time(*clock), current.tzinfo), False


# --- schedules (reminder, todo): local wall-clock times, stored as UTC epoch seconds ------------------


def parse_schedule_time(text: str, tz: tzinfo, now: datetime | None = None) -> tuple[datetime, bool]:
    """When something is due, as an aware datetime in ``tz``, and whether the text named a time of day.

    A time alone (``09:30``, ``下午3点``, ``9am``) is the next time the clock shows it; a delay (``20m``,
    ``in 2 hours``, ``PT20M``, ``3个月后``) counts from now; otherwise whatever :func:`parse_moment` reads
    (ISO 8601, ``2026-12-01``, ``明天 9点``, ``2026年12月1日 下午3点``). A bare day word (``明天``) is
    refused: a schedule needs the time of day or an explicit date.
    """
    raw = " ".join(text.split())
    current = (now or datetime.now(UTC)).astimezone(tz)
    if not raw:
        raise TimeInputError("the time is empty")
    if re.fullmatch(r"[+-]?\d+(?:\.\d+)?", raw):
        raise TimeInputError(f"'{raw}' is a bare number; say what it counts: '{raw} minutes', '{raw}:00' or a date")
    bare = _DELAY_HINT.sub("", raw)
    terms = None if _CN_DATE.search(raw) else _duration_terms(bare)  # 12月5日 is a date, not 12 months 5 days
    if terms is not None:  # before clock times: 3时 is 3 hours here, as it always was for reminders
        if not any(unit in ("years", "months") for unit, _ in terms):
            return current + parse_delay(raw), True
        moment = current + parse_duration(bare)
        if moment <= current:
            raise TimeInputError(f"the duration '{raw}' must be longer than zero")
        return moment, True
    clock = _clock(raw, whole=True)
    if clock is not None:
        candidate = datetime.combine(current.date(), time(*clock), tzinfo=tz)
        if candidate <= current:
            candidate = datetime.combine(current.date() + timedelta(days=1), time(*clock), tzinfo=tz)
        return candidate, True
    if raw.lower() in _DAY_WORDS:
        raise TimeInputError(
            f"'{raw}' does not say when; give the time of day too (e.g. '{raw} 09:00') or a date like 2026-12-01"
        )
    try:
        moment, date_only = parse_moment(raw, tz, now=current)
    except TimeInputError:
        raise TimeInputError(
            f"'{raw}' is not a time I understand; use ISO 8601 local time like '2026-12-01 09:00', "
            "a date '2026-12-01', a time '09:30' or '下午3点', '明天 9点', or a delay like 'in 20 minutes'"
        ) from None
    return moment, not date_only


def to_epoch(value: datetime) -> float:
    return value.astimezone(UTC).timestamp()


def from_epoch(ts: float, tz: tzinfo) -> datetime:
    return datetime.fromtimestamp(ts, UTC).astimezone(tz)


def format_local(ts: float, tz: tzinfo, *, with_time: bool = True) -> str:
    """``2026-12-01 09:00 (Tue)`` in ``tz``."""
    return from_epoch(ts, tz).strftime("%Y-%m-%d %H:%M (%a)" if with_time else "%Y-%m-%d (%a)")


def end_of_day(day: date, tz: tzinfo) -> datetime:
    return datetime.combine(day, time(23, 59, 59), tzinfo=tz)
