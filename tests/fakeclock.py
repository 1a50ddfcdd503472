"""A clock the tests move by hand (implements weclaw_desktop.clock.Clock).

Time stands still until :meth:`FakeClock.advance`; ``sleep(s)`` returns once the clock was advanced by
``s`` (on the running loop, without real waiting). :attr:`FakeClock.sleeping` counts the sleeps pending
right now: a service that is sleeping on this clock has finished what it was doing, so a test can wait
for ``clock.sleeping`` (tests/polling.py) before it advances time or checks that nothing happened.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime


class FakeClock:
    def __init__(self, start: float | None = None) -> None:
        self._wall = time.time() if start is None else start
        self._mono = 1_000.0
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []

    # --- weclaw_desktop.clock.Clock -------------------------------------------------------------
    def now(self) -> datetime:
        return datetime.fromtimestamp(self._wall, UTC)

    def time(self) -> float:
        return self._wall

    def monotonic(self) -> float:
        return self._mono

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        entry = (self._mono + seconds, asyncio.get_running_loop().create_future())
        self._sleepers.append(entry)
        try:
            await entry[1]
        finally:
            self._sleepers.remove(entry)

    # --- for the tests --------------------------------------------------------------------------
    @property
    def sleeping(self) -> int:
        """How many ``sleep`` calls are waiting for the clock right now."""
        return sum(1 for _, future in self._sleepers if not future.done())

    def advance(self, seconds: float) -> None:
        """Move wall and monotonic time forward; the sleeps that are over return (at the next loop turn)."""
        assert seconds >= 0, "a clock only moves forward"
        self._wall += seconds
        self._mono += seconds
        for deadline, future in list(self._sleepers):
            if deadline <= self._mono and not future.done():
                future.set_result(None)

    def advance_to(self, epoch: float) -> None:
        """Advance until the wall clock shows ``epoch``."""
        self.advance(max(0.0, epoch - self._wall))
