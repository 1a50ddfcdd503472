"""The idle budget of a stream (agent/provider/client.py ``_IdleWatch``).

What must survive: no data event for ``idle_s`` ends the stream with the idle error (keep-alives are not
progress); a steady stream far longer than the budget never times out and arms only a few loop timers (one per
budget, not one per event: under qasync every timer stays registered until its deadline, and 40,000 of them made
a long answer's processing superlinear); a Stop (the task cancelled from outside) stays a cancellation.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from weclaw_desktop.agent.provider import client as client_mod
from weclaw_desktop.agent.provider.sse import Event, SSEReader


class _Source:
    """Stands in for ``_Events``: one event every ``every_s`` (keep-alive comments in between count)."""

    def __init__(self, reader: SSEReader, every_s: float, keepalives: int = 0) -> None:
        self.reader = reader
        self.every_s = every_s
        self.keepalives = keepalives

    async def next(self) -> Event | None:
        for _ in range(self.keepalives):
            self.reader.comments += 1
        await asyncio.sleep(self.every_s)
        return Event("{}")


async def test_no_event_within_the_budget_is_the_idle_error() -> None:
    reader = SSEReader()
    watch = client_mod._IdleWatch(0.05)
    with pytest.raises(client_mod._Timeout) as raised:
        await watch.next(_Source(reader, 0.5, keepalives=3), reader)  # type: ignore[arg-type]
    watch.close()
    assert raised.value.phase == "idle" and raised.value.keepalives == 3


async def test_a_steady_stream_longer_than_the_budget_arms_few_timers(monkeypatch: Any) -> None:
    loop = asyncio.get_running_loop()
    armed = 0
    call_at = loop.call_at

    def counting(when: float, callback: Any, *args: Any, **kwargs: Any) -> asyncio.TimerHandle:
        nonlocal armed
        if getattr(callback, "__func__", None) is client_mod._IdleWatch._check:
            armed += 1
        return call_at(when, callback, *args, **kwargs)

    monkeypatch.setattr(loop, "call_at", counting)
    reader = SSEReader()
    watch = client_mod._IdleWatch(0.1)
    source = _Source(reader, 0.002)
    got = 0
    t0 = loop.time()
    while loop.time() - t0 < 0.5:  # five budgets long, ~250 events
        assert await watch.next(source, reader) is not None  # type: ignore[arg-type]
        got += 1
    watch.close()
    assert got > 50
    assert armed <= 8, f"{armed} timers for {got} events"


async def test_a_stop_while_waiting_stays_a_cancellation() -> None:
    reader = SSEReader()
    watch = client_mod._IdleWatch(10.0)
    task = asyncio.ensure_future(watch.next(_Source(reader, 5.0), reader))  # type: ignore[arg-type]
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    watch.close()
