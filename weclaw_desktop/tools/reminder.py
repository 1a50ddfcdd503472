"""The reminder tool: create, list and cancel reminders (store: reminder_store.py).

Creating works anywhere (the CLI too): the reminder is saved in weclaw.db. Showing it is the job of the
:class:`~weclaw_desktop.tools.reminder_scheduler.ReminderScheduler` that the desktop app runs; the tool
tells the model whether a notification can be delivered right now.
"""

from __future__ import annotations

from datetime import timedelta, tzinfo
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from weclaw_desktop.clock import SYSTEM_CLOCK, Clock
from weclaw_desktop.toolkit.base import BaseTool, ToolContext, ToolError, ToolResult, action
from weclaw_desktop.tools._db import tool_database
from weclaw_desktop.tools.reminder_scheduler import delivery_status, reminders_changed
from weclaw_desktop.tools.reminder_store import CronError, ReminderStore, check_cron, next_cron
from weclaw_desktop.tools.timeparse import (
    TimeInputError,
    format_local,
    local_zone,
    parse_delay,
    parse_schedule_time,
    to_epoch,
    zone_label,
)

MAX_AHEAD = timedelta(days=5 * 366)


class ReminderConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timezone: str = Field(default="", description="IANA zone for times and cron schedules ('' = the system's)")
    max_active: int = Field(default=500, ge=1, le=10000, description="Most active reminders at once")


class CreateParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    message: str = Field(
        min_length=1, max_length=500, description="What to remind the user of, e.g. '喝水' or 'Call mom'"
    )
    at: str = Field(
        default="",
        max_length=60,
        description="Local date and time to remind at, ISO 8601: '2026-12-01 09:00'; a time today/tomorrow "
        "'18:30' or '下午3点'; or a day with a time: '明天 9点', 'tomorrow 3pm'. Use this OR after OR cron.",
    )
    after: str = Field(
        default="",
        max_length=60,
        description="Remind after this delay from now: '20 minutes', '1h30m', '2 days', '20分钟', '半小时'. Use this OR at OR cron.",
    )
    cron: str = Field(
        default="",
        max_length=100,
        description="Repeat on a 5-field cron schedule in local time (minute hour day month weekday), e.g. "
        "'0 9 * * 1-5' = 9:00 every weekday, '30 21 * * *' = 21:30 daily. Use this OR at OR after.",
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> CreateParams:
        given = [name for name in ("at", "after", "cron") if getattr(self, name).strip()]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of 'at' (a time), 'after' (a delay) or 'cron' (a schedule); got "
                + (", ".join(given) if given else "none")
            )
        return self


class ListParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: Literal["active", "done", "all"] = Field(
        default="active", description="active = still to come; done = shown, cancelled or failed; all"
    )
    limit: int = Field(default=50, ge=1, le=500, description="Most reminders to list")


class CancelParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ids: list[int] = Field(min_length=1, max_length=100, description="Reminder ids, as shown by reminder_list")


class ReminderTool(BaseTool):
    Config = ReminderConfig
    #: Where "now" comes from; tests set the same hand-moved clock here and on the scheduler.
    clock: Clock = SYSTEM_CLOCK

    def _tz(self) -> tzinfo:
        try:
            return local_zone(self.config.timezone)
        except TimeInputError as exc:
            raise ToolError(f"The reminder tool's timezone setting is wrong: {exc}") from None

    def _store(self, ctx: ToolContext) -> ReminderStore:
        return ReminderStore(tool_database(ctx), self.clock)

    @action(
        "Create a reminder that pops up on this computer: at a time ('at'), after a delay ('after', e.g. "
        "'in 20 minutes'), or repeating on a cron schedule ('cron'). Use it for 'remind me ...', "
        "'提醒我…', '每天9点提醒…'. The result says whether notifications can be shown right now."
    )
    async def create(self, params: CreateParams, ctx: ToolContext) -> ToolResult:
        message = " ".join(params.message.split())
        if not message:
            raise ToolError("The reminder message is empty. Say what to remind the user of.")
        tz = self._tz()
        now = self.clock.now()
        kind, cron = "once", ""
        try:
            if params.cron.strip():
                kind, cron = "cron", check_cron(params.cron)
                due = next_cron(cron, tz, now.timestamp())
            elif params.after.strip():
                due = to_epoch(now + parse_delay(params.after))
            else:
                when, has_time = parse_schedule_time(params.at, tz, now)
                if not has_time:
                    raise ToolError(
                        f"'{params.at}' is a date without a time of day. Give the time too, e.g. '{params.at.strip()} 09:00'."
                    )
                due = to_epoch(when)
        except (TimeInputError, CronError) as exc:
            raise ToolError(f"{exc}. No reminder was created.") from None
        if due <= now.timestamp():
            raise ToolError(
                f"{format_local(due, tz)} has already passed (it is now {format_local(now.timestamp(), tz)}); "
                "no reminder was created. Ask the user for a future time."
            )
        if due - now.timestamp() > MAX_AHEAD.total_seconds():
            raise ToolError("That is more than 5 years away; check the date. No reminder was created.")
        store = self._store(ctx)
        active = await store.db.run(store.count_active)
        if active >= self.config.max_active:
            raise ToolError(
                f"There are already {active} active reminders (the limit is {self.config.max_active}). "
                "Cancel some with reminder_cancel first."
            )
        reminder = await store.db.run(store.create, message, kind, cron, zone_label(tz), due, ctx.origin.value)
        reminders_changed(store.db.path)
        deliverable, how = delivery_status(store.db.path)
        local = format_local(due, tz)
        what = f"every '{cron}', first on {local}" if kind == "cron" else local
        return ToolResult.ok(
            f"Reminder #{reminder.id} set: {message} — {what} ({zone_label(tz)}). {how}",
            data={**reminder.data(tz), "timezone": zone_label(tz), "can_notify_now": deliverable},
        )

    @action(
        "List reminders: the coming ones (default), the ones already shown or cancelled ('done'), or all. "
        "Use it to answer 'what reminders do I have' and to find ids to cancel."
    )
    async def list(self, params: ListParams, ctx: ToolContext) -> ToolResult:
        tz = self._tz()
        store = self._store(ctx)
        reminders = await store.db.run(store.query, params.status, params.limit)
        deliverable, how = delivery_status(store.db.path)
        if not reminders:
            return ToolResult.ok(
                f"No {params.status} reminders.", data={"reminders": [], "can_notify_now": deliverable}
            )
        lines = "\n".join(r.line(tz) for r in reminders)
        footer = "" if deliverable or params.status == "done" else f"\nNote: {how}"
        return ToolResult.ok(
            f"{len(reminders)} reminder{'s' if len(reminders) != 1 else ''} ({zone_label(tz)} time):\n{lines}{footer}",
            data={"reminders": [r.data(tz) for r in reminders], "can_notify_now": deliverable},
        )

    @action("Cancel reminders by id (from reminder_list) so they are not shown; repeating ones stop for good.")
    async def cancel(self, params: CancelParams, ctx: ToolContext) -> ToolResult:
        store = self._store(ctx)
        ids = list(dict.fromkeys(params.ids))
        existing = await store.db.run(store.get, ids)
        missing = sorted(set(ids) - {r.id for r in existing})
        if missing:
            raise ToolError(
                f"No reminder with id {', '.join(map(str, missing))}; nothing was cancelled. "
                "Call reminder_list with status 'all' to see the ids."
            )
        inactive = {r.id: r.status for r in existing if r.status != "active"}
        if len(inactive) == len(ids):
            states = ", ".join(f"#{i} is {s}" for i, s in inactive.items())
            raise ToolError(f"Nothing to cancel: {states}.")
        after = await store.db.run(store.cancel, ids)
        reminders_changed(store.db.path)
        cancelled = [r for r in after if r.id not in inactive]
        text = "Cancelled: " + "; ".join(f"#{r.id} {r.message}" for r in cancelled)
        if inactive:
            text += "\nNot active, left as they were: " + ", ".join(f"#{i} ({s})" for i, s in inactive.items())
        return ToolResult.ok(text, data={"cancelled": [r.id for r in cancelled], "skipped": sorted(inactive)})
