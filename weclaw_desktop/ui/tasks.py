"""Background tasks a widget starts from Qt slots: kept referenced, failures logged, awaitable, cancellable.

``asyncio.ensure_future`` alone lets a task be garbage-collected mid-flight and swallows its exception;
every UI object that spawns coroutines from signals uses one :class:`TaskSet` instead.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

log = logging.getLogger("weclaw.ui.tasks")


class TaskSet:
    def __init__(self, what: str, on_error: Callable[[BaseException], object] | None = None) -> None:
        self.what = what
        self.on_error = on_error
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            log.error("%s task failed: %r", self.what, exc, exc_info=exc)
            if self.on_error is not None:
                self.on_error(exc)

    def __len__(self) -> int:
        return len(self._tasks)

    async def idle(self) -> None:
        """Wait until the tasks started so far (and any they start) are done."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def cancel_pending(self) -> None:
        """Cancel without waiting (from a synchronous slot, e.g. a dialog closing)."""
        for task in list(self._tasks):
            task.cancel()

    async def cancel_all(self) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
