"""weclaw_desktop/clock.py: the real clock, the test clock (tests/fakeclock.py) and wait_event on both.

What must survive: waiting for an event ends at whichever comes first (the event or the clock's time),
on the system clock and on a hand-moved one; cancelling a waiter cancels it (nothing swallows it) and
leaves no sleep behind.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC

import pytest
from fakeclock import FakeClock
from polling import until

from weclaw_desktop.clock import SYSTEM_CLOCK, Clock, wait_event


def test_both_clocks_meet_the_protocol() -> None:
    assert isinstance(SYSTEM_CLOCK, Clock) and isinstance(FakeClock(), Clock)
    now = SYSTEM_CLOCK.now()
    assert now.tzinfo is UTC and abs(now.timestamp() - time.time()) < 5
    assert abs(SYSTEM_CLOCK.time() - time.time()) < 5


async def test_system_clock_wait_event_times_out_or_sees_the_event() -> None:
    event = asyncio.Event()
    started = time.monotonic()
    assert await wait_event(event, 0.05) is False
    assert time.monotonic() - started >= 0.04
    asyncio.get_running_loop().call_later(0.01, event.set)
    assert await wait_event(event, 30) is True


async def test_fake_clock_time_stands_still_until_advanced() -> None:
    clock = FakeClock(start=1_000_000.0)
    assert clock.time() == 1_000_000.0 and clock.now().timestamp() == 1_000_000.0
    before = clock.monotonic()
    clock.advance(90)
    assert clock.time() == 1_000_090.0 and clock.monotonic() == before + 90
    clock.advance_to(1_000_100.0)
    assert clock.time() == 1_000_100.0
    with pytest.raises(AssertionError):
        clock.advance(-1)


async def test_fake_clock_wait_event_ends_when_the_clock_passes_or_the_event_is_set() -> None:
    clock = FakeClock()
    event = asyncio.Event()
    waiting = asyncio.ensure_future(wait_event(event, 60, clock))
    await until(lambda: clock.sleeping == 1)
    clock.advance(59)
    await asyncio.sleep(0.02)
    assert not waiting.done()  # not there yet
    clock.advance(1)
    assert await asyncio.wait_for(waiting, 5) is False
    await until(lambda: clock.sleeping == 0)

    woken = asyncio.ensure_future(wait_event(event, 3600, clock))
    await until(lambda: clock.sleeping == 1)
    event.set()
    assert await asyncio.wait_for(woken, 5) is True
    await until(lambda: clock.sleeping == 0)  # the sleep that lost the race is gone


async def test_cancelling_a_waiter_cancels_it_and_leaves_no_sleep() -> None:
    clock = FakeClock()
    waiting = asyncio.ensure_future(wait_event(asyncio.Event(), 3600, clock))
    await until(lambda: clock.sleeping == 1)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await until(lambda: clock.sleeping == 0)
