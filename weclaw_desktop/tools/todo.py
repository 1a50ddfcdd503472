"""The todo tool: a to-do list in weclaw.db with optional due dates and priorities."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import timedelta, tzinfo
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.clock import SYSTEM_CLOCK, Clock
from weclaw_desktop.storage.db import Database, Migration, register_migrations
from weclaw_desktop.toolkit.base import BaseTool, ToolContext, ToolError, ToolResult, action
from weclaw_desktop.tools._db import tool_database
from weclaw_desktop.tools.timeparse import (
    TimeInputError,
    end_of_day,
    format_local,
    local_zone,
    parse_schedule_time,
    to_epoch,
)

COMPONENT = "todo"
PRIORITIES: dict[str, int] = {"low": 0, "normal": 1, "high": 2}
PRIORITY_NAMES = {v: k for k, v in PRIORITIES.items()}

register_migrations(
    COMPONENT,
    [
        Migration(
            1,
            """
            CREATE TABLE todo (
                id INTEGER PRIMARY KEY,
                text TEXT NOT NULL,
                notes TEXT NOT NULL DEFAULT '',
                priority INTEGER NOT NULL DEFAULT 1,
                due_at REAL,
                due_has_time INTEGER NOT NULL DEFAULT 0,
                done INTEGER NOT NULL DEFAULT 0,
                created_at REAL NOT NULL,
                completed_at REAL
            );
            CREATE INDEX todo_open_due ON todo(done, due_at);
            """,
        )
    ],
)


class TodoConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timezone: str = Field(default="", description="IANA zone for due dates ('' = the system's zone)")


class AddParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=500, description="The task, e.g. '给小宝报名游泳课'")
    due: str = Field(
        default="",
        max_length=60,
        description="Optional due date or time in local time: '2026-12-01', '2026-12-01 18:00', '明天 18:00', "
        "'12月5日', or 'in 3 days' ('' = no due date)",
    )
    priority: Literal["low", "normal", "high"] = Field(default="normal", description="How important it is")
    notes: str = Field(default="", max_length=2000, description="Optional details")


class ListParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: Literal["open", "done", "all"] = Field(default="open", description="Which tasks to show")
    due: Literal["any", "overdue", "today", "week", "none"] = Field(
        default="any",
        description="Filter by due date: any, overdue (past due and open), today (due by the end of today), "
        "week (due within 7 days), none (no due date)",
    )
    limit: int = Field(default=50, ge=1, le=500, description="Most tasks to list")


class IdsParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ids: list[int] = Field(min_length=1, max_length=100, description="Task ids, as shown by todo_list")


@dataclass
class Task:
    id: int
    text: str
    notes: str
    priority: int
    due_at: float | None
    due_has_time: bool
    done: bool
    created_at: float
    completed_at: float | None

    def data(self, tz: tzinfo) -> dict[str, Any]:
        return {
            "id": self.id,
            "text": self.text,
            "priority": PRIORITY_NAMES.get(self.priority, "normal"),
            "due": self.due_text(tz) or None,
            "done": self.done,
        }

    def due_text(self, tz: tzinfo) -> str:
        if self.due_at is None:
            return ""
        return format_local(self.due_at, tz, with_time=self.due_has_time)

    def line(self, tz: tzinfo, now: float) -> str:
        box = "[x]" if self.done else "[ ]"
        parts = [f"#{self.id} {box} {self.text}"]
        if self.priority != 1:
            parts.append(f"priority {PRIORITY_NAMES[self.priority]}")
        if self.due_at is not None:
            overdue = not self.done and self.due_at < now
            parts.append(("OVERDUE, was due " if overdue else "due ") + self.due_text(tz))
        if self.notes:
            parts.append(f"notes: {self.notes}")
        return " — ".join(parts)


def _task(row: sqlite3.Row) -> Task:
    return Task(
        id=int(row["id"]),
        text=str(row["text"]),
        notes=str(row["notes"]),
        priority=int(row["priority"]),
        due_at=None if row["due_at"] is None else float(row["due_at"]),
        due_has_time=bool(row["due_has_time"]),
        done=bool(row["done"]),
        created_at=float(row["created_at"]),
        completed_at=None if row["completed_at"] is None else float(row["completed_at"]),
    )


class TodoStore:
    """Tasks in ``weclaw.db``; the blocking methods run in a worker thread through :meth:`Database.run`."""

    def __init__(self, db: Database, clock: Clock = SYSTEM_CLOCK) -> None:
        self.db = db
        self.clock = clock

    def add(self, text: str, notes: str, priority: int, due_at: float | None, due_has_time: bool) -> Task:
        self.db.ensure(COMPONENT)
        with self.db.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO todo(text, notes, priority, due_at, due_has_time, created_at) VALUES (?,?,?,?,?,?)",
                (text, notes, priority, due_at, int(due_has_time), self.clock.time()),
            )
            return _task(conn.execute("SELECT * FROM todo WHERE id=?", (cur.lastrowid,)).fetchone())

    def query(self, status: str, due_before: float | None, due_filter: str, now: float, limit: int) -> list[Task]:
        self.db.ensure(COMPONENT)
        where: list[str] = []
        args: list[Any] = []
        if status == "open":
            where.append("done = 0")
        elif status == "done":
            where.append("done = 1")
        if due_filter == "none":
            where.append("due_at IS NULL")
        elif due_filter == "overdue":
            where.append("due_at IS NOT NULL AND due_at < ? AND done = 0")
            args.append(now)
        elif due_before is not None:
            where.append("due_at IS NOT NULL AND due_at <= ?")
            args.append(due_before)
        sql = "SELECT * FROM todo" + (" WHERE " + " AND ".join(where) if where else "")
        sql += " ORDER BY done, due_at IS NULL, due_at, priority DESC, id LIMIT ?"
        return [_task(r) for r in self.db.connect().execute(sql, (*args, limit))]

    def get(self, ids: list[int]) -> list[Task]:
        self.db.ensure(COMPONENT)
        marks = ",".join("?" * len(ids))
        rows = self.db.connect().execute(f"SELECT * FROM todo WHERE id IN ({marks}) ORDER BY id", tuple(ids))
        return [_task(r) for r in rows]

    def complete(self, ids: list[int]) -> list[Task]:
        self.db.ensure(COMPONENT)
        marks = ",".join("?" * len(ids))
        with self.db.transaction() as conn:
            conn.execute(
                f"UPDATE todo SET done=1, completed_at=? WHERE done=0 AND id IN ({marks})", (self.clock.time(), *ids)
            )
            rows = conn.execute(f"SELECT * FROM todo WHERE id IN ({marks}) ORDER BY id", tuple(ids)).fetchall()
        return [_task(r) for r in rows]

    def remove(self, ids: list[int]) -> list[Task]:
        self.db.ensure(COMPONENT)
        marks = ",".join("?" * len(ids))
        with self.db.transaction() as conn:
            rows = conn.execute(f"SELECT * FROM todo WHERE id IN ({marks}) ORDER BY id", tuple(ids)).fetchall()
            conn.execute(f"DELETE FROM todo WHERE id IN ({marks})", tuple(ids))
        return [_task(r) for r in rows]

    def counts(self) -> tuple[int, int]:
        self.db.ensure(COMPONENT)
        row = self.db.connect().execute("SELECT sum(done = 0), sum(done = 1) FROM todo").fetchone()
        return int(row[0] or 0), int(row[1] or 0)


class TodoTool(BaseTool):
    Config = TodoConfig
    #: Where "now" comes from (due dates, overdue); tests set a clock they move by hand.
    clock: Clock = SYSTEM_CLOCK

    def _tz(self) -> tzinfo:
        try:
            return local_zone(self.config.timezone)
        except TimeInputError as exc:
            raise ToolError(f"The todo tool's timezone setting is wrong: {exc}") from None

    def _store(self, ctx: ToolContext) -> TodoStore:
        return TodoStore(tool_database(ctx), self.clock)

    async def _existing(self, store: TodoStore, ids: list[int]) -> list[Task]:
        unique = list(dict.fromkeys(ids))
        found = await store.db.run(store.get, unique)
        missing = sorted(set(unique) - {t.id for t in found})
        if missing:
            raise ToolError(
                f"No task with id {', '.join(map(str, missing))}; nothing was changed. "
                "Call todo_list (status 'all') to see the ids."
            )
        return found

    @action(
        "Add a task to the user's to-do list, with an optional due date and priority. Use it when the "
        "user says they need to do something ('I have to ...', '记得要…', 'add to my list')."
    )
    async def add(self, params: AddParams, ctx: ToolContext) -> ToolResult:
        text = " ".join(params.text.split())
        if not text:
            raise ToolError("The task text is empty. Say what needs to be done.")
        tz = self._tz()
        due_at: float | None = None
        has_time = False
        if params.due.strip():
            try:
                when, has_time = parse_schedule_time(params.due, tz, self.clock.now())
            except TimeInputError as exc:
                raise ToolError(f"Bad due date: {exc}. Nothing was added.") from None
            if not has_time:
                when = end_of_day(when.date(), tz)
            if when.year > self.clock.now().year + 50:
                raise ToolError("The due date is more than 50 years away; check the year. Nothing was added.")
            due_at = to_epoch(when)
        store = self._store(ctx)
        task = await store.db.run(store.add, text, params.notes.strip(), PRIORITIES[params.priority], due_at, has_time)
        note = ""
        now = self.clock.time()
        if due_at is not None and due_at < now:
            note = " Note: that due date is already past."
        return ToolResult.ok(f"Added task {task.line(tz, now)}.{note}", data=task.data(tz))

    @action(
        "List the user's tasks. By default the open ones, soonest due first; filter by status (open, "
        "done, all) and due date (overdue, today, week, none). Use it to answer 'what do I have to do'."
    )
    async def list(self, params: ListParams, ctx: ToolContext) -> ToolResult:
        tz = self._tz()
        current = self.clock.now()
        now = current.timestamp()
        due_before: float | None = None
        local_now = current.astimezone(tz)
        if params.due == "today":
            due_before = to_epoch(end_of_day(local_now.date(), tz))
        elif params.due == "week":
            due_before = to_epoch(end_of_day(local_now.date() + timedelta(days=7), tz))
        store = self._store(ctx)
        tasks = await store.db.run(store.query, params.status, due_before, params.due, now, params.limit)
        open_count, done_count = await store.db.run(store.counts)
        summary = f"({open_count} open, {done_count} done in total)"
        if not tasks:
            return ToolResult.ok(f"No {params.status} tasks match (due: {params.due}). {summary}", data={"tasks": []})
        lines = "\n".join(t.line(tz, now) for t in tasks)
        return ToolResult.ok(
            f"{len(tasks)} task{'s' if len(tasks) != 1 else ''} {summary}:\n{lines}",
            data={"tasks": [t.data(tz) for t in tasks], "open": open_count, "done": done_count},
        )

    @action("Mark tasks as done by id (ids come from todo_list). Use it when the user finished something.")
    async def complete(self, params: IdsParams, ctx: ToolContext) -> ToolResult:
        store = self._store(ctx)
        before = await self._existing(store, params.ids)
        already = [t.id for t in before if t.done]
        tasks = await store.db.run(store.complete, [t.id for t in before])
        newly = [t.id for t in tasks if t.id not in already]
        tz = self._tz()
        text = "Done: " + "; ".join(f"#{t.id} {t.text}" for t in tasks if t.id in newly) if newly else ""
        if already:
            text += ("\n" if text else "") + f"Already done before: {', '.join(f'#{i}' for i in already)}"
        return ToolResult.ok(
            text, data={"completed": newly, "already_done": already, "tasks": [t.data(tz) for t in tasks]}
        )

    @action(
        "Delete tasks from the list for good, by id. Use complete for finished tasks; use remove only "
        "when the user wants a task gone (added by mistake, no longer needed)."
    )
    async def remove(self, params: IdsParams, ctx: ToolContext) -> ToolResult:
        store = self._store(ctx)
        await self._existing(store, params.ids)
        removed = await store.db.run(store.remove, list(dict.fromkeys(params.ids)))
        return ToolResult.ok(
            "Removed: " + "; ".join(f"#{t.id} {t.text}" for t in removed), data={"removed": [t.id for t in removed]}
        )
