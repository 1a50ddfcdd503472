"""The reminder scheduler: a service on the app's asyncio loop that shows reminders when they are due.

The app builds it once, after the database exists, and gives it a way to reach the notifier bridge::

    scheduler = ReminderScheduler(db, lambda: registry.bridge("notifier"))
    await scheduler.start()      # fires what was missed while the app was closed, then waits
    ...
    scheduler.wake()             # e.g. after the notifier bridge was injected
    await scheduler.stop()

It sleeps until the next reminder is due (never polling in a tight loop; at most ``max_sleep`` seconds
at a time so that a suspended laptop or a changed wall clock is noticed), and wakes early when a
reminder is created or cancelled (the reminder tool calls :func:`reminders_changed`). Reminders that
were due before :meth:`start` fire once, marked late with their original time. A recurring (cron)
reminder fires once for any number of missed occurrences and then moves to its next future time.

Without a notifier (it is not injected yet) due reminders wait; nothing is marked as shown. A notifier
that raises is retried ``max_attempts`` times, ``retry_delay`` apart. Time (reading it and sleeping)
comes from ``clock`` (weclaw_desktop/clock.py; the system clock by default), so tests move time
instead of waiting for it. No Qt here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from weclaw_desktop.bridges.protocols import NotifierBridge
from weclaw_desktop.clock import SYSTEM_CLOCK, Clock, wait_event
from weclaw_desktop.storage.db import Database
from weclaw_desktop.tools.reminder_store import Reminder, ReminderStore
from weclaw_desktop.tools.timeparse import format_local

log = logging.getLogger("weclaw.reminders")

NotifierGetter = Callable[[], NotifierBridge | Any | None]
FiredCallback = Callable[[Reminder, bool], None]

_registry_lock = threading.Lock()
_running: dict[Path, list[ReminderScheduler]] = {}


def _key(path: Path) -> Path:
    return Path(path).expanduser().resolve()


def reminders_changed(db_path: Path) -> None:
    """Tell the schedulers running on this database that reminders were added or cancelled."""
    with _registry_lock:
        schedulers = list(_running.get(_key(db_path), []))
    for scheduler in schedulers:
        scheduler.wake()


def delivery_status(db_path: Path) -> tuple[bool, str]:
    """Whether a reminder saved in this database can be shown now, and if not, why."""
    with _registry_lock:
        schedulers = list(_running.get(_key(db_path), []))
    if not schedulers:
        return False, (
            "The WeClaw desktop app is not running here, so nothing can pop up right now; the reminder is "
            "saved and will be shown (marked late) when the app starts."
        )
    if not any(s.can_deliver for s in schedulers):
        return False, (
            "Desktop notifications are not available yet; the reminder is saved and will be shown as soon as they are."
        )
    return True, "It will pop up as a desktop notification."


class ReminderScheduler:
    def __init__(
        self,
        db: Database,
        notifier_getter: NotifierGetter,
        *,
        max_sleep: float = 60.0,
        late_after: float = 60.0,
        retry_delay: float = 30.0,
        max_attempts: int = 5,
        on_fired: FiredCallback | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.db = db
        self.store = ReminderStore(db, clock)
        self.notifier_getter = notifier_getter
        self.max_sleep = max_sleep
        self.late_after = late_after
        self.retry_delay = retry_delay
        self.max_attempts = max_attempts
        self.on_fired = on_fired
        self.clock = clock
        self.started_at: float | None = None
        self.fired_count = 0
        self.wakeups = 0
        self._task: asyncio.Task[None] | None = None
        self._event: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiting_for_notifier = False

    # --- lifecycle ------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    @property
    def can_deliver(self) -> bool:
        return self.running and self._notifier() is not None

    async def start(self) -> None:
        """Start on the running loop (idempotent). Reminders missed while closed fire right away."""
        if self.running:
            return
        await self.db.run(self.store.ensure)
        self._loop = asyncio.get_running_loop()
        self._event = asyncio.Event()
        self.started_at = self.clock.time()
        self._task = asyncio.create_task(self._run(), name="reminder-scheduler")
        with _registry_lock:
            _running.setdefault(_key(self.db.path), []).append(self)
        log.info("reminder scheduler started for %s", self.db.path)

    async def stop(self) -> None:
        with _registry_lock:
            peers = _running.get(_key(self.db.path), [])
            if self in peers:
                peers.remove(self)
            if not peers:
                _running.pop(_key(self.db.path), None)
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        log.info("reminder scheduler stopped")

    def wake(self) -> None:
        """Re-read the reminders now (they changed, or the notifier appeared). Safe from any thread."""
        loop, event = self._loop, self._event
        if loop is None or event is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            event.set()
        else:
            loop.call_soon_threadsafe(event.set)

    # --- the loop -------------------------------------------------------------------------------
    async def _run(self) -> None:
        assert self._event is not None
        while True:
            self._event.clear()
            try:
                wait = await self._tick()
            except asyncio.CancelledError:
                raise
            except Exception:  # a broken database must not kill the service; try again later
                log.exception("reminder scheduler tick failed")
                wait = self.retry_delay
            wait = self.max_sleep if wait is None else min(wait, self.max_sleep)
            if wait > 0:
                await wait_event(self._event, wait, self.clock)
            self.wakeups += 1

    async def _tick(self) -> float | None:
        """Fire what is due; return seconds until the next reminder (None: nothing scheduled)."""
        now = self.clock.time()
        due = await self.db.run(self.store.due, now)
        if due:
            notifier = self._notifier()
            if notifier is None:
                if not self._waiting_for_notifier:
                    log.info("%d reminder(s) due, waiting for the notifier", len(due))
                self._waiting_for_notifier = True
                return None  # wake() (bridge injected) or max_sleep brings us back
            self._waiting_for_notifier = False
            for reminder in due:
                await self._fire(notifier, reminder)
        next_at = await self.db.run(self.store.next_at)
        if next_at is None:
            return None
        return max(0.0, next_at - self.clock.time())

    def _notifier(self) -> Any | None:
        try:
            return self.notifier_getter()
        except Exception:
            log.exception("notifier getter failed")
            return None

    async def _fire(self, notifier: Any, reminder: Reminder) -> None:
        now = self.clock.time()
        due_at = reminder.due_at if reminder.due_at is not None else now
        missed_while_closed = self.started_at is not None and due_at < self.started_at
        late = missed_while_closed or now - due_at > self.late_after
        title, message = notification_text(reminder, late=late, missed=missed_while_closed)
        try:
            await notifier.notify(title, message, urgent=True)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            attempts = reminder.attempts + 1
            give_up = attempts >= self.max_attempts
            log.warning("reminder %d: notification failed (%s); attempt %d", reminder.id, exc, attempts)
            error = f"{type(exc).__name__}: {exc}"[:300]
            await self.db.run(self.store.mark_attempt_failed, reminder, error, now + self.retry_delay, give_up)
            return
        updated = await self.db.run(self.store.mark_fired, reminder, self.clock.time(), late)
        self.fired_count += 1
        log.info("reminder %d shown%s", reminder.id, " (late)" if late else "")
        if self.on_fired is not None and updated is not None:
            try:
                self.on_fired(updated, late)
            except Exception:
                log.exception("on_fired callback failed")


def notification_text(reminder: Reminder, *, late: bool, missed: bool = False) -> tuple[str, str]:
    """Title and body of the notification; a late one says when it was due."""
    title = "Reminder · 提醒"
    body = reminder.message
    if late and reminder.due_at is not None:
        why = " while WeClaw was not running" if missed else ""
        body += f"\n(late: it was due {format_local(reminder.due_at, reminder.zone)}{why})"
    return title, body
