"""reminder: the tool (create / list / cancel) and the ReminderScheduler service on the qasync loop.

The scheduler tests move a FakeClock (tests/fakeclock.py) shared by the tool and the scheduler instead of
sleeping until reminders come due; one test (a sooner reminder wakes a sleeping scheduler) runs on the
real clock to prove the real sleep/wake wiring.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fakeclock import FakeClock
from polling import until
from tools.db_support import Caller, FailingNotifier, RecordingNotifier

from weclaw_desktop.paths import app_paths
from weclaw_desktop.storage.db import Database
from weclaw_desktop.toolkit.base import ToolStatus
from weclaw_desktop.tools._db import forget_database
from weclaw_desktop.tools.reminder_scheduler import ReminderScheduler
from weclaw_desktop.tools.reminder_store import ReminderStore, next_cron
from weclaw_desktop.tools.timeparse import local_zone

TZ = "Asia/Shanghai"


@pytest.fixture
def rem(make_caller: Callable[..., Caller]) -> Caller:
    return make_caller({"reminder": {"timezone": TZ}})


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def frem(rem: Caller, clock: FakeClock) -> Caller:
    """The reminder tool reading the hand-moved clock that the scheduler tests give their scheduler."""
    rem.registry.get("reminder").clock = clock  # type: ignore[attr-defined]
    return rem


@pytest.fixture
async def schedulers() -> AsyncIterator[list[ReminderScheduler]]:
    """Schedulers a test starts; all stopped at the end even when the test fails."""
    started: list[ReminderScheduler] = []
    yield started
    for s in started:
        await s.stop()


async def _start(started: list[ReminderScheduler], db: Database, notifier: Any, **kw: Any) -> ReminderScheduler:
    scheduler = ReminderScheduler(db, lambda: notifier, **kw)
    await scheduler.start()
    started.append(scheduler)
    return scheduler


async def _until(predicate: Callable[[], bool], within: float = 3.0) -> None:
    await until(predicate, within=within)


async def _asleep(clock: FakeClock, scheduler: ReminderScheduler, after_wakeups: int = -1) -> None:
    """Wait until the scheduler has woken more than ``after_wakeups`` times, finished its tick and sleeps
    on the clock again: from then on nothing happens until the clock moves or someone wakes it."""
    await until(
        lambda: scheduler.wakeups > after_wakeups and clock.sleeping == 1,
        message=f"the scheduler did not go back to sleep (wakeups {scheduler.wakeups}, sleeping {clock.sleeping})",
    )


async def _rows(db: Database) -> list[tuple[int, str, int]]:
    store = ReminderStore(db)
    return sorted((r.id, r.status, r.fire_count) for r in await db.run(store.query, "all", 100))


# --- the tool ---------------------------------------------------------------------------------------


async def test_create_without_the_app_saves_and_says_it_cannot_notify_now(rem: Caller, db: Database) -> None:
    before = datetime.now(UTC)
    made = await rem("reminder_create", message="喝水", after="20 minutes")
    assert made.succeeded, made.output
    assert made.data["can_notify_now"] is False
    assert "not running" in made.output and "#1" in made.output and "喝水" in made.output
    due = made.data["due_utc"]
    assert before.timestamp() + 1200 <= due <= time.time() + 1200

    listed = await rem("reminder_list")
    assert [r["message"] for r in listed.data["reminders"]] == ["喝水"]
    assert "Asia/Shanghai time" in listed.output and "not running" in listed.output
    assert await _rows(db) == [(1, "active", 0)]


async def test_absolute_time_is_stored_utc_and_shown_local(rem: Caller) -> None:
    year = datetime.now(UTC).year + 1
    made = await rem("reminder_create", message="交房租", at=f"{year}-03-01 09:00")
    assert made.succeeded, made.output
    assert made.data["due_utc"] == datetime(year, 3, 1, 1, 0, tzinfo=UTC).timestamp()  # 09:00 +08:00
    assert f"{year}-03-01 09:00" in made.output and made.data["timezone"] == TZ


async def test_chinese_and_english_phrasings_from_the_shared_parser(rem: Caller) -> None:
    zone = local_zone(TZ)
    before = time.time()
    half = await rem("reminder_create", message="关火", after="半小时")
    assert half.succeeded, half.output
    assert before + 1800 <= half.data["due_utc"] <= time.time() + 1800
    tomorrow = (datetime.now(zone) + timedelta(days=1)).date()
    made = await rem("reminder_create", message="开会", at="明天 下午3点")
    assert made.succeeded, made.output
    assert datetime.fromtimestamp(made.data["due_utc"], zone) == datetime(
        tomorrow.year, tomorrow.month, tomorrow.day, 15, 0, tzinfo=zone
    )
    made = await rem("reminder_create", message="call", at="tomorrow at 9am")
    assert made.succeeded, made.output
    assert datetime.fromtimestamp(made.data["due_utc"], zone) == datetime(
        tomorrow.year, tomorrow.month, tomorrow.day, 9, 0, tzinfo=zone
    )
    bare = await rem("reminder_create", message="x", at="明天")
    assert bare.status is ToolStatus.ERROR and "give the time of day too" in bare.output
    months = await rem("reminder_create", message="x", after="3 months")
    assert months.status is ToolStatus.ERROR and "counts months or years" in months.output


async def test_cron_reminder_first_occurrence(rem: Caller) -> None:
    made = await rem("reminder_create", message="站起来活动一下", cron="0 9 * * 1-5")
    assert made.succeeded, made.output
    local = datetime.fromtimestamp(made.data["due_utc"], local_zone(TZ))
    assert (local.hour, local.minute, local.weekday() < 5) == (9, 0, True)
    assert local > datetime.now(local_zone(TZ))
    assert made.data["kind"] == "cron" and made.data["cron"] == "0 9 * * 1-5"


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"message": "x"}, "exactly one of"),
        ({"message": "x", "at": "18:00", "after": "5m"}, "exactly one of"),
        ({"message": "", "after": "5m"}, "message"),
        ({"message": "x", "after": "0 minutes"}, "longer than zero"),
        ({"message": "x", "after": "soonish"}, "not a duration"),
        ({"message": "x", "at": "2020-01-01 08:00"}, "already passed"),
        ({"message": "x", "at": "2999-01-01"}, "without a time"),
        ({"message": "x", "at": "2999-01-01 08:00"}, "5 years"),
        ({"message": "x", "cron": "61 * * * *"}, "not a valid cron"),
        ({"message": "x", "cron": "* * * * * *"}, "5 fields"),
        ({"message": "x", "cron": "@reboot"}, "not supported"),
    ],
)
async def test_create_rejects_bad_input_and_creates_nothing(
    rem: Caller, db: Database, arguments: dict[str, str], expected: str
) -> None:
    result = await rem("reminder_create", **arguments)
    assert result.status is ToolStatus.ERROR
    assert expected in result.output
    assert await _rows(db) == []


async def test_list_filters_and_bad_input(rem: Caller) -> None:
    keep = (await rem("reminder_create", message="A", after="1h")).data["id"]
    gone = (await rem("reminder_create", message="B", after="2h")).data["id"]
    await rem("reminder_cancel", ids=[gone])
    assert [r["id"] for r in (await rem("reminder_list")).data["reminders"]] == [keep]
    assert [r["id"] for r in (await rem("reminder_list", status="done")).data["reminders"]] == [gone]
    assert [r["id"] for r in (await rem("reminder_list", status="all")).data["reminders"]] == [keep, gone]
    bad = await rem("reminder_list", status="upcoming")
    assert bad.status is ToolStatus.ERROR and "status" in bad.output
    bad_limit = await rem("reminder_list", limit=0)
    assert bad_limit.status is ToolStatus.ERROR and "limit" in bad_limit.output


async def test_cancel_and_its_bad_inputs(rem: Caller, db: Database) -> None:
    a = (await rem("reminder_create", message="A", after="1h")).data["id"]
    b = (await rem("reminder_create", message="B", after="2h")).data["id"]
    unknown = await rem("reminder_cancel", ids=[a, 99])
    assert unknown.status is ToolStatus.ERROR and "99" in unknown.output
    empty = await rem("reminder_cancel", ids=[])
    assert empty.status is ToolStatus.ERROR
    assert await _rows(db) == [(a, "active", 0), (b, "active", 0)]  # nothing cancelled so far

    done = await rem("reminder_cancel", ids=[a])
    assert done.succeeded and done.data["cancelled"] == [a]
    again = await rem("reminder_cancel", ids=[a])
    assert again.status is ToolStatus.ERROR and "is cancelled" in again.output
    assert await _rows(db) == [(a, "cancelled", 0), (b, "active", 0)]


# --- the scheduler ----------------------------------------------------------------------------------


async def test_reminder_missed_while_closed_fires_once_after_restart(
    frem: Caller, db: Database, clock: FakeClock
) -> None:
    made = await frem("reminder_create", message="吃药", after="1s")
    due = made.data["due_utc"]
    path = app_paths().database
    forget_database(path)  # the app (and its database) is closed while the reminder comes due
    clock.advance_to(due + 0.2)

    notifier = RecordingNotifier()
    db1 = Database(path)
    s1 = ReminderScheduler(db1, lambda: notifier, clock=clock)
    await s1.start()
    try:
        await _until(lambda: len(notifier.shown) == 1)
        await _asleep(clock, s1)  # and not a second time: it is done and waits for the next reminder
    finally:
        await s1.stop()
        db1.close()
    await until(lambda: clock.sleeping == 0)
    title, message, urgent = notifier.shown[0]
    assert "Reminder" in title and urgent is True
    local_due = datetime.fromtimestamp(due, local_zone(TZ)).strftime("%Y-%m-%d %H:%M")
    assert message.startswith("吃药\n(late: it was due " + local_due) and "not running" in message
    assert len(notifier.shown) == 1

    db2 = Database(path)  # second restart: already shown, stays quiet
    s2 = ReminderScheduler(db2, lambda: notifier, clock=clock)
    await s2.start()
    try:
        await _asleep(clock, s2)
        clock.advance(0.3)
        await _asleep(clock, s2)
        assert len(notifier.shown) == 1
        assert await _rows(db2) == [(made.data["id"], "fired", 1)]
    finally:
        await s2.stop()
        db2.close()


async def test_cron_reminder_fires_and_moves_to_its_next_occurrence(
    frem: Caller, db: Database, clock: FakeClock, schedulers: list[ReminderScheduler]
) -> None:
    made = await frem("reminder_create", message="休息眼睛", cron="*/5 * * * *")
    first = made.data["due_utc"]
    notifier = RecordingNotifier()
    scheduler = await _start(schedulers, db, notifier, clock=clock)
    await _asleep(clock, scheduler)
    assert notifier.shown == []  # not due yet

    clock.advance_to(first + 1)
    scheduler.wake()
    await _until(lambda: len(notifier.shown) == 1)
    store = ReminderStore(db)
    [after_one] = await db.run(store.get, [made.data["id"]])
    assert (after_one.status, after_one.fire_count, after_one.due_at) == ("active", 1, first + 300)
    assert after_one.due_at == next_cron("*/5 * * * *", local_zone(TZ), first)
    assert notifier.shown[0][1] == "休息眼睛"  # on time: no "late" note

    clock.advance_to(first + 3 * 300 + 10)  # the machine slept through two occurrences: one late notification
    scheduler.wake()
    await _until(lambda: len(notifier.shown) == 2)
    await _asleep(clock, scheduler)
    [after_two] = await db.run(store.get, [made.data["id"]])
    assert (after_two.fire_count, after_two.due_at, after_two.last_late) == (2, first + 4 * 300, True)
    assert len(notifier.shown) == 2 and "late: it was due" in notifier.shown[1][1]


async def test_scheduler_wakes_early_when_a_sooner_reminder_is_added(
    rem: Caller, db: Database, schedulers: list[ReminderScheduler]
) -> None:
    """On the real clock (SYSTEM_CLOCK): a scheduler asleep for an hour is woken by a new reminder and
    then really sleeps about a second until it is due. This proves the real clock wiring."""
    await rem("reminder_create", message="Later", after="1h")
    notifier = RecordingNotifier()
    scheduler = await _start(schedulers, db, notifier, max_sleep=3600)  # would sleep an hour
    await asyncio.sleep(0.1)
    wakeups = scheduler.wakeups

    soon = await rem("reminder_create", message="Soon", after="1s")
    assert soon.data["can_notify_now"] is True and "pop up" in soon.output
    await _until(lambda: len(notifier.shown) == 1, within=4)
    assert notifier.shown[0][1] == "Soon"
    assert scheduler.wakeups > wakeups
    assert [r["message"] for r in (await rem("reminder_list")).data["reminders"]] == ["Later"]


async def test_cancelled_reminder_never_fires(
    frem: Caller, db: Database, clock: FakeClock, schedulers: list[ReminderScheduler]
) -> None:
    notifier = RecordingNotifier()
    scheduler = await _start(schedulers, db, notifier, clock=clock)
    made = await frem("reminder_create", message="Cancelled", after="1s")
    await frem("reminder_cancel", ids=[made.data["id"]])
    await _asleep(clock, scheduler)
    wakeups = scheduler.wakeups
    clock.advance(1.3)
    clock.advance(scheduler.max_sleep)  # and past the longest sleep: the scheduler surely looked again
    await _asleep(clock, scheduler, wakeups)
    assert notifier.shown == []


async def test_due_reminders_wait_for_the_notifier_then_fire(
    frem: Caller, db: Database, clock: FakeClock, schedulers: list[ReminderScheduler]
) -> None:
    bridge: dict[str, RecordingNotifier] = {}
    scheduler = ReminderScheduler(db, lambda: bridge.get("notifier"), max_sleep=3600, clock=clock)
    await scheduler.start()
    schedulers.append(scheduler)
    made = await frem("reminder_create", message="Stretch", after="1s")
    assert made.data["can_notify_now"] is False and "not available yet" in made.output
    await _asleep(clock, scheduler)
    wakeups = scheduler.wakeups
    clock.advance(1.3)
    await _asleep(clock, scheduler, wakeups)
    assert await _rows(db) == [(made.data["id"], "active", 0)]  # due, but nothing could show it

    bridge["notifier"] = RecordingNotifier()  # the window injected its notifier
    scheduler.wake()
    await _until(lambda: len(bridge["notifier"].shown) == 1)
    assert await _rows(db) == [(made.data["id"], "fired", 1)]


async def test_failing_notifier_is_retried_then_given_up(
    frem: Caller, db: Database, clock: FakeClock, schedulers: list[ReminderScheduler]
) -> None:
    notifier = FailingNotifier()
    made = await frem("reminder_create", message="Flaky", after="1s")
    scheduler = await _start(schedulers, db, notifier, retry_delay=0.05, max_attempts=3, clock=clock)
    store = ReminderStore(db)
    for step in (1.0, 0.05, 0.05):  # due after 1 s, then a retry every retry_delay
        await _asleep(clock, scheduler)
        clock.advance(step + 0.001)
    await _until(lambda: notifier.calls >= 3, within=4)
    await _asleep(clock, scheduler)  # the third failure is recorded; it gave up and waits for nothing
    clock.advance(0.2)
    await _asleep(clock, scheduler)
    [row] = await db.run(store.get, [made.data["id"]])
    assert (row.status, row.attempts, notifier.calls) == ("failed", 3, 3)
    assert "tray is gone" in row.last_error


async def test_stop_is_prompt_and_start_is_idempotent(db: Database, schedulers: list[ReminderScheduler]) -> None:
    scheduler = await _start(schedulers, db, RecordingNotifier(), max_sleep=3600)
    await scheduler.start()
    assert scheduler.running
    started = time.monotonic()
    await scheduler.stop()
    assert not scheduler.running and time.monotonic() - started < 1.0
    scheduler.wake()  # harmless after stop


def test_next_cron_keeps_wall_clock_time_across_dst() -> None:
    berlin = local_zone("Europe/Berlin")
    before_switch = datetime(2026, 3, 27, 10, 0, tzinfo=berlin).timestamp()
    nxt = next_cron("0 9 * * *", berlin, before_switch)
    after = next_cron("0 9 * * *", berlin, nxt)
    assert datetime.fromtimestamp(nxt, berlin).hour == 9 and datetime.fromtimestamp(after, berlin).hour == 9
    assert after - nxt == timedelta(hours=23).total_seconds()  # the night the clocks go forward
