"""Reminders in weclaw.db: one-shot (at a time) or recurring (a cron schedule), all times UTC epoch.

A reminder is ``active`` until it fires (one-shot -> ``fired``), is cancelled (``cancelled``) or cannot
be delivered after several attempts (``failed``). ``due_at`` is when the current occurrence was due;
``next_at`` is when the scheduler should try next (equal to ``due_at`` unless a delivery failed and is
being retried), so a late delivery can still say when it was meant to be.

All methods are blocking; call them through ``Database.run``.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any

from croniter import croniter

from weclaw_desktop.clock import SYSTEM_CLOCK, Clock
from weclaw_desktop.storage.db import Database, Migration, register_migrations
from weclaw_desktop.tools.timeparse import format_local, from_epoch, local_zone, to_epoch

COMPONENT = "reminders"
MIN_CRON_INTERVAL_S = 60.0

register_migrations(
    COMPONENT,
    [
        Migration(
            1,
            """
            CREATE TABLE reminders (
                id INTEGER PRIMARY KEY,
                message TEXT NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN ('once', 'cron')),
                cron TEXT NOT NULL DEFAULT '',
                tz TEXT NOT NULL,
                due_at REAL,
                next_at REAL,
                status TEXT NOT NULL DEFAULT 'active',
                created_at REAL NOT NULL,
                origin TEXT NOT NULL DEFAULT '',
                fire_count INTEGER NOT NULL DEFAULT 0,
                last_fired_at REAL,
                last_late INTEGER NOT NULL DEFAULT 0,
                attempts INTEGER NOT NULL DEFAULT 0,
                last_error TEXT NOT NULL DEFAULT ''
            );
            CREATE INDEX reminders_active_next ON reminders(status, next_at);
            """,
        )
    ],
)


class CronError(ValueError):
    """The cron expression is invalid or fires too often; the message says why."""


def check_cron(expr: str) -> str:
    """A normalised 5-field cron expression (or @daily-style macro), or :class:`CronError`."""
    text = " ".join(expr.split())
    if not text:
        raise CronError("the cron expression is empty")
    if not text.startswith("@") and len(text.split(" ")) != 5:
        raise CronError(
            f"'{text}' must have 5 fields: minute hour day-of-month month day-of-week (e.g. '0 9 * * 1-5' "
            "for 9:00 on weekdays)"
        )
    if text == "@reboot":
        raise CronError("@reboot is not supported; use a time schedule")
    try:
        it = croniter(text, datetime(2026, 1, 1))
        first = it.get_next(float)
        second = it.get_next(float)
    except (ValueError, KeyError) as exc:  # croniter's errors subclass ValueError
        raise CronError(f"'{text}' is not a valid cron expression: {exc}") from None
    if second - first < MIN_CRON_INTERVAL_S:
        raise CronError(f"'{text}' fires more than once a minute")
    return text


def next_cron(expr: str, tz: tzinfo, after: float) -> float:
    """The first time strictly after ``after`` (epoch) that ``expr`` matches, in ``tz`` wall-clock time."""
    start = from_epoch(after, tz)
    return to_epoch(croniter(expr, start).get_next(datetime))


@dataclass
class Reminder:
    id: int
    message: str
    kind: str
    cron: str
    tz: str
    due_at: float | None
    next_at: float | None
    status: str
    created_at: float
    fire_count: int
    last_fired_at: float | None
    last_late: bool
    attempts: int
    last_error: str

    @property
    def zone(self) -> tzinfo:
        try:
            return local_zone(self.tz)
        except ValueError:
            return local_zone()

    def when_text(self, tz: tzinfo | None = None) -> str:
        zone = tz or self.zone
        if self.status == "active" and self.due_at is not None:
            when = format_local(self.due_at, zone)
            return f"every '{self.cron}', next {when}" if self.kind == "cron" else when
        if self.kind == "cron":
            return f"every '{self.cron}'"
        return format_local(self.due_at, zone) if self.due_at is not None else "-"

    def line(self, tz: tzinfo | None = None) -> str:
        state = "" if self.status == "active" else f" [{self.status}]"
        fired = ""
        if self.last_fired_at is not None:
            fired = f" (last shown {format_local(self.last_fired_at, tz or self.zone)}" + (
                ", late)" if self.last_late else ")"
            )
        return f"#{self.id} {self.when_text(tz)}: {self.message}{state}{fired}"

    def data(self, tz: tzinfo | None = None) -> dict[str, Any]:
        zone = tz or self.zone
        return {
            "id": self.id,
            "message": self.message,
            "kind": self.kind,
            "cron": self.cron or None,
            "status": self.status,
            "due": format_local(self.due_at, zone) if self.due_at is not None else None,
            "due_utc": self.due_at,
            "fire_count": self.fire_count,
        }


def _reminder(row: sqlite3.Row) -> Reminder:
    return Reminder(
        id=int(row["id"]),
        message=str(row["message"]),
        kind=str(row["kind"]),
        cron=str(row["cron"]),
        tz=str(row["tz"]),
        due_at=None if row["due_at"] is None else float(row["due_at"]),
        next_at=None if row["next_at"] is None else float(row["next_at"]),
        status=str(row["status"]),
        created_at=float(row["created_at"]),
        fire_count=int(row["fire_count"]),
        last_fired_at=None if row["last_fired_at"] is None else float(row["last_fired_at"]),
        last_late=bool(row["last_late"]),
        attempts=int(row["attempts"]),
        last_error=str(row["last_error"]),
    )


class ReminderStore:
    def __init__(self, db: Database, clock: Clock = SYSTEM_CLOCK) -> None:
        self.db = db
        self.clock = clock

    def ensure(self) -> None:
        self.db.ensure(COMPONENT)

    def create(self, message: str, kind: str, cron: str, tz: str, due_at: float, origin: str = "") -> Reminder:
        self.ensure()
        with self.db.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO reminders(message, kind, cron, tz, due_at, next_at, created_at, origin) "
                "VALUES (?,?,?,?,?,?,?,?)",
                (message, kind, cron, tz, due_at, due_at, self.clock.time(), origin),
            )
            row = conn.execute("SELECT * FROM reminders WHERE id=?", (cur.lastrowid,)).fetchone()
        return _reminder(row)

    def get(self, ids: list[int]) -> list[Reminder]:
        self.ensure()
        marks = ",".join("?" * len(ids))
        rows = self.db.connect().execute(f"SELECT * FROM reminders WHERE id IN ({marks}) ORDER BY id", tuple(ids))
        return [_reminder(r) for r in rows]

    def query(self, status: str = "active", limit: int = 100) -> list[Reminder]:
        self.ensure()
        args: tuple[str, ...] = ()
        if status == "all":
            sql = "SELECT * FROM reminders"
        elif status == "done":
            sql = "SELECT * FROM reminders WHERE status != 'active'"
        else:
            sql, args = "SELECT * FROM reminders WHERE status = ?", (status,)
        sql += " ORDER BY status != 'active', next_at IS NULL, next_at, id LIMIT ?"
        return [_reminder(r) for r in self.db.connect().execute(sql, (*args, limit))]

    def count_active(self) -> int:
        self.ensure()
        return int(self.db.connect().execute("SELECT count(*) FROM reminders WHERE status='active'").fetchone()[0])

    def cancel(self, ids: list[int]) -> list[Reminder]:
        """Cancel the active ones of ``ids``; returns all of ``ids`` that exist, after the change."""
        self.ensure()
        marks = ",".join("?" * len(ids))
        with self.db.transaction() as conn:
            conn.execute(
                f"UPDATE reminders SET status='cancelled', next_at=NULL WHERE status='active' AND id IN ({marks})",
                tuple(ids),
            )
            rows = conn.execute(f"SELECT * FROM reminders WHERE id IN ({marks}) ORDER BY id", tuple(ids)).fetchall()
        return [_reminder(r) for r in rows]

    def due(self, now: float, limit: int = 100) -> list[Reminder]:
        """Active reminders whose next attempt time has come, oldest first."""
        self.ensure()
        rows = self.db.connect().execute(
            "SELECT * FROM reminders WHERE status='active' AND next_at <= ? ORDER BY next_at, id LIMIT ?",
            (now, limit),
        )
        return [_reminder(r) for r in rows]

    def next_at(self) -> float | None:
        self.ensure()
        row = self.db.connect().execute("SELECT min(next_at) FROM reminders WHERE status='active'").fetchone()
        return None if row[0] is None else float(row[0])

    def mark_fired(self, reminder: Reminder, fired_at: float, late: bool) -> Reminder | None:
        """Record a delivery: a one-shot is finished, a cron reminder moves to its next occurrence."""
        self.ensure()
        due: float | None = reminder.due_at
        nxt: float | None = None
        status = "fired"
        if reminder.kind == "cron":
            status = "active"
            due = nxt = next_cron(reminder.cron, reminder.zone, max(fired_at, reminder.due_at or fired_at))
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE reminders SET status=?, due_at=?, next_at=?, fire_count=fire_count+1, last_fired_at=?, "
                "last_late=?, attempts=0, last_error='' WHERE id=? AND status='active'",
                (status, due, nxt, fired_at, int(late), reminder.id),
            )
            row = conn.execute("SELECT * FROM reminders WHERE id=?", (reminder.id,)).fetchone()
        return _reminder(row) if row else None

    def mark_attempt_failed(self, reminder: Reminder, error: str, retry_at: float, give_up: bool) -> None:
        self.ensure()
        with self.db.transaction() as conn:
            if give_up and reminder.kind == "once":
                conn.execute(
                    "UPDATE reminders SET status='failed', next_at=NULL, attempts=attempts+1, last_error=? "
                    "WHERE id=? AND status='active'",
                    (error, reminder.id),
                )
            elif give_up:  # a recurring reminder skips this occurrence and keeps its schedule
                following = next_cron(reminder.cron, reminder.zone, max(self.clock.time(), reminder.due_at or 0))
                conn.execute(
                    "UPDATE reminders SET due_at=?, next_at=?, attempts=0, last_error=? WHERE id=? AND status='active'",
                    (following, following, error, reminder.id),
                )
            else:
                conn.execute(
                    "UPDATE reminders SET next_at=?, attempts=attempts+1, last_error=? WHERE id=? AND status='active'",
                    (retry_at, error, reminder.id),
                )
