"""TaskSet: UI background tasks are kept, their failures reported, and they can be awaited or cancelled."""

from __future__ import annotations

import asyncio

import pytest

from weclaw_desktop.ui.tasks import TaskSet


async def test_failures_are_reported_and_idle_waits_for_everything(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[BaseException] = []
    tasks = TaskSet("test", on_error=seen.append)
    done: list[int] = []

    async def ok(n: int) -> None:
        await asyncio.sleep(0.01 * n)
        done.append(n)
        if n == 1:
            tasks.spawn(ok(3))  # started by a task: idle() waits for it too

    async def boom() -> None:
        raise ValueError("nope")

    tasks.spawn(ok(2))
    tasks.spawn(ok(1))
    tasks.spawn(boom())
    await tasks.idle()
    assert sorted(done) == [1, 2, 3] and len(tasks) == 0
    assert [str(e) for e in seen] == ["nope"]
    assert any("test task failed" in r.getMessage() for r in caplog.records)


async def test_cancel_all_cancels_and_waits() -> None:
    tasks = TaskSet("test")
    started = asyncio.Event()

    async def forever() -> None:
        started.set()
        await asyncio.sleep(3600)

    task = tasks.spawn(forever())
    await started.wait()
    await tasks.cancel_all()
    assert task.cancelled() and len(tasks) == 0
