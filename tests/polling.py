"""The one poll-until helper of the test suite: wait for a condition without blocking the event loop.

    await until(lambda: len(notifier.shown) == 1)                       # raises AssertionError on timeout
    text = await until(read_text, within=10, message="file not written")  # returns the truthy value
    if await reached(lambda: process_gone(pid)): ...                     # True/False instead of raising
    until_sync(port_open, within=30)                                     # plain (non-async) tests

The predicate may be a plain function or return an awaitable (an ``async def`` or a coroutine-returning
lambda); it is checked once before the first pause and once more at the deadline, so a condition that
became true during the last interval is never reported as a timeout. ``message`` may be a callable, to
describe the state at the moment of failure. In async tests never use ``qtbot.wait*`` (it nests a Qt
loop; see ENGINEERING_NOTES) and never ``time.sleep`` (it stalls the loop the code under test runs on).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")

DEFAULT_TIMEOUT = 5.0
DEFAULT_INTERVAL = 0.02
DEFAULT_MESSAGE = "condition not reached in time"

Message = str | Callable[[], str]


def _text(message: Message, within: float) -> str:
    text = message() if callable(message) else message
    return f"{text} (waited {within:g} s)"


async def until(
    predicate: Callable[[], T | Awaitable[T]],
    *,
    within: float = DEFAULT_TIMEOUT,
    interval: float = DEFAULT_INTERVAL,
    message: Message = DEFAULT_MESSAGE,
) -> T:
    """Poll ``predicate`` every ``interval`` s on the running loop until it is truthy; return its value.

    Raises AssertionError with ``message`` when it is still falsy after ``within`` seconds.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        last_try = loop.time() >= deadline
        value: Any = predicate()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value  # type: ignore[no-any-return]
        if last_try:
            raise AssertionError(_text(message, within))
        await asyncio.sleep(min(interval, max(0.0, deadline - loop.time())))


async def reached(
    predicate: Callable[[], Any], *, within: float = DEFAULT_TIMEOUT, interval: float = DEFAULT_INTERVAL
) -> bool:
    """Like :func:`until`, but answers whether the condition was reached instead of raising."""
    try:
        await until(predicate, within=within, interval=interval)
    except AssertionError:
        return False
    return True


def until_sync(
    predicate: Callable[[], T],
    *,
    within: float = DEFAULT_TIMEOUT,
    interval: float = DEFAULT_INTERVAL,
    message: Message = DEFAULT_MESSAGE,
    pause: Callable[[float], object] = time.sleep,
) -> T:
    """:func:`until` for code that runs outside the event loop (sync fixtures, the Playwright thread).

    ``pause(seconds)`` waits between checks; pass one that keeps another event loop turning (e.g.
    Playwright's ``page.wait_for_timeout``) when events must be delivered while waiting.
    """
    deadline = time.monotonic() + within
    while True:
        last_try = time.monotonic() >= deadline
        value = predicate()
        if value:
            return value
        if last_try:
            raise AssertionError(_text(message, within))
        pause(min(interval, max(0.0, deadline - time.monotonic())))
