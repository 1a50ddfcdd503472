"""todo: add / list / complete / remove through the dispatcher, with due dates, priorities and filters."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from fakeclock import FakeClock
from tools.db_support import Caller

from weclaw_desktop.storage.db import Database
from weclaw_desktop.toolkit.base import ToolStatus
from weclaw_desktop.tools.timeparse import local_zone
from weclaw_desktop.tools.todo import TodoStore

TZ = "Asia/Shanghai"


@pytest.fixture
def todo(make_caller: object) -> Caller:
    return make_caller({"todo": {"timezone": TZ}})  # type: ignore[operator]


def _local(days: int, hour: int = 18) -> str:
    now = datetime.now(local_zone(TZ))
    return (now + timedelta(days=days)).replace(hour=hour, minute=0).strftime("%Y-%m-%d %H:%M")


async def _all(db: Database) -> list[tuple[int, str, bool]]:
    store = TodoStore(db)
    tasks = await db.run(store.query, "all", None, "any", 0.0, 500)
    return sorted((t.id, t.text, t.done) for t in tasks)


async def test_add_list_complete_remove(todo: Caller, db: Database) -> None:
    later = await todo("todo_add", text="给小宝报名游泳课", due=_local(3), priority="high")
    sooner = await todo("todo_add", text="Buy milk", due=_local(1, 9))
    undated = await todo("todo_add", text="Read a book", priority="low", notes="something light")
    assert later.succeeded and sooner.succeeded and undated.succeeded
    assert later.data["priority"] == "high" and later.data["due"].startswith(_local(3)[:16])

    listed = await todo("todo_list")
    assert [t["text"] for t in listed.data["tasks"]] == ["Buy milk", "给小宝报名游泳课", "Read a book"]
    assert listed.data["open"] == 3 and listed.data["done"] == 0
    assert "priority high" in listed.output and "notes: something light" in listed.output

    done = await todo("todo_complete", ids=[sooner.data["id"]])
    assert done.succeeded and done.data["completed"] == [sooner.data["id"]]
    assert [t["text"] for t in (await todo("todo_list")).data["tasks"]] == ["给小宝报名游泳课", "Read a book"]
    finished = await todo("todo_list", status="done")
    assert [t["text"] for t in finished.data["tasks"]] == ["Buy milk"] and finished.data["tasks"][0]["done"]

    removed = await todo("todo_remove", ids=[undated.data["id"]])
    assert removed.succeeded and removed.data["removed"] == [undated.data["id"]]
    assert await _all(db) == [(later.data["id"], "给小宝报名游泳课", False), (sooner.data["id"], "Buy milk", True)]


async def test_due_filters(todo: Caller) -> None:
    overdue = (await todo("todo_add", text="Pay the bill", due=_local(-2))).data["id"]
    today = (await todo("todo_add", text="Call mom", due=datetime.now(local_zone(TZ)).strftime("%Y-%m-%d"))).data
    week = (await todo("todo_add", text="Dentist", due="in 5 days")).data["id"]
    far = (await todo("todo_add", text="Renew passport", due=_local(40))).data["id"]
    none = (await todo("todo_add", text="Learn piano")).data["id"]

    def ids(result: object) -> list[int]:
        return [t["id"] for t in result.data["tasks"]]  # type: ignore[attr-defined]

    assert ids(await todo("todo_list", due="overdue")) == [overdue]
    assert ids(await todo("todo_list", due="today")) == [overdue, today["id"]]
    assert ids(await todo("todo_list", due="week")) == [overdue, today["id"], week]
    assert ids(await todo("todo_list", due="none")) == [none]
    assert ids(await todo("todo_list")) == [overdue, today["id"], week, far, none]
    assert "OVERDUE" in (await todo("todo_list", due="overdue")).output
    assert today["due"].count(":") == 0  # a date without a time shows as a date


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"text": ""}, "text"),
        ({"text": "   "}, "empty"),
        ({"text": "Water plants", "due": "next blursday"}, "not a time I understand"),
        ({"text": "Water plants", "priority": "urgent"}, "priority"),
        ({"text": "Water plants", "due": "3026-01-01"}, "50 years"),
    ],
)
async def test_add_rejects_bad_input(todo: Caller, db: Database, arguments: dict[str, str], expected: str) -> None:
    kept = (await todo("todo_add", text="Existing task")).data["id"]
    result = await todo("todo_add", **arguments)
    assert result.status is ToolStatus.ERROR
    assert expected in result.output
    assert await _all(db) == [(kept, "Existing task", False)]


async def test_list_rejects_bad_filters(todo: Caller) -> None:
    bad_status = await todo("todo_list", status="pending")
    assert bad_status.status is ToolStatus.ERROR and "status" in bad_status.output
    bad_due = await todo("todo_list", due="tomorrow")
    assert bad_due.status is ToolStatus.ERROR and "due" in bad_due.output
    bad_limit = await todo("todo_list", limit=0)
    assert bad_limit.status is ToolStatus.ERROR and "limit" in bad_limit.output
    empty = await todo("todo_list")
    assert empty.succeeded and empty.data["tasks"] == [] and "No open tasks" in empty.output


async def test_complete_bad_ids_change_nothing(todo: Caller, db: Database) -> None:
    a = (await todo("todo_add", text="A")).data["id"]
    b = (await todo("todo_add", text="B")).data["id"]
    unknown = await todo("todo_complete", ids=[a, 404])
    assert unknown.status is ToolStatus.ERROR and "404" in unknown.output
    assert await _all(db) == [(a, "A", False), (b, "B", False)]  # a was not completed either
    empty = await todo("todo_complete", ids=[])
    assert empty.status is ToolStatus.ERROR and "ids" in empty.output
    wrong_type = await todo("todo_complete", ids=["first"])
    assert wrong_type.status is ToolStatus.ERROR

    await todo("todo_complete", ids=[a])
    twice = await todo("todo_complete", ids=[a, b])
    assert twice.succeeded and twice.data["completed"] == [b] and twice.data["already_done"] == [a]


async def test_remove_bad_ids_remove_nothing(todo: Caller, db: Database) -> None:
    a = (await todo("todo_add", text="A")).data["id"]
    unknown = await todo("todo_remove", ids=[a, 7])
    assert unknown.status is ToolStatus.ERROR and "7" in unknown.output
    empty = await todo("todo_remove", ids=[])
    assert empty.status is ToolStatus.ERROR
    assert await _all(db) == [(a, "A", False)]


async def test_due_dates_in_user_words(todo: Caller) -> None:
    zone = local_zone(TZ)
    tomorrow = (datetime.now(zone) + timedelta(days=1)).date()
    timed = await todo("todo_add", text="交报告", due="明天 18:00")
    assert timed.succeeded, timed.output
    assert timed.data["due"].startswith(f"{tomorrow:%Y-%m-%d} 18:00")
    dated = await todo("todo_add", text="Renew passport", due="12月31日")
    assert dated.succeeded, dated.output
    assert dated.data["due"].startswith(f"{datetime.now(zone).year}-12-31") and ":" not in dated.data["due"]
    bare = await todo("todo_add", text="x", due="15")
    assert bare.status is ToolStatus.ERROR and "'15' is a bare number" in bare.output


async def test_overdue_follows_the_tools_clock(todo: Caller) -> None:
    """The todo tool reads "now" from its clock (weclaw_desktop/clock.py): moving it makes a task overdue."""
    clock = FakeClock(datetime(2030, 1, 1, 9, 0, tzinfo=local_zone(TZ)).timestamp())
    todo.registry.get("todo").clock = clock  # type: ignore[attr-defined]
    added = await todo("todo_add", text="Submit the form", due="in 2 hours")
    assert added.succeeded, added.output
    assert added.data["due"].startswith("2030-01-01 11:00")
    assert (await todo("todo_list", due="overdue")).data["tasks"] == []
    clock.advance(3 * 3600)
    overdue = await todo("todo_list", due="overdue")
    assert [t["text"] for t in overdue.data["tasks"]] == ["Submit the form"]
