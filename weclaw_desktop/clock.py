"""The clock services read time from, so that tests can move time instead of sleeping through it.

A :class:`Clock` gives the wall-clock time (``now()``, aware, and ``time()``, epoch seconds), a monotonic
reading for durations, and an awaitable ``sleep``. :data:`SYSTEM_CLOCK` is the real one and the default
everywhere; tests pass a clock they advance by hand. :func:`wait_event` waits for an ``asyncio.Event``
or until the clock says ``seconds`` have passed, whichever comes first (a scheduler's "sleep until the
next due time, or until woken").
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    def now(self) -> datetime:
        """The current wall-clock time, timezone-aware (UTC)."""
        ...

    def time(self) -> float:
        """The current wall-clock time in seconds since the epoch (``now().timestamp()``)."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back (for durations and deadlines)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Return once ``seconds`` have passed on this clock."""
        ...


class SystemClock:
    """The real clock: the system's wall clock, ``time.monotonic`` and ``asyncio.sleep``."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def time(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


SYSTEM_CLOCK: Clock = SystemClock()


async def wait_event(event: asyncio.Event, seconds: float, clock: Clock = SYSTEM_CLOCK) -> bool:
    """Wait until ``event`` is set (True) or ``seconds`` have passed on ``clock`` (False)."""
    if event.is_set():
        return True
    if isinstance(clock, SystemClock):  # the common case without an extra task
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await event.wait()
        return event.is_set()
    waiter = asyncio.ensure_future(event.wait())
    sleeper = asyncio.ensure_future(clock.sleep(seconds))
    try:
        await asyncio.wait({waiter, sleeper}, return_when=asyncio.FIRST_COMPLETED)
    finally:  # the loser is cancelled, never awaited here (that could swallow our own cancellation)
        waiter.cancel()
        sleeper.cancel()
    return event.is_set()
