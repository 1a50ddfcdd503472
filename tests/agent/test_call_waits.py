"""A call's wait for the user's approval is a stored fact, apart from its running time.

What must survive: the wait the dispatcher measured at the approval gate is stored with the call (history and
audit), read back by the transcript, and said the same way by every place that shows a stored call's time (the
CLI line, the Markdown export): "running time · waited N s for approval", never the total as the running time.
A denied call shows no running time. A database from before the wait was stored opens, and its calls read as
"no wait known": the total, as before. Real runtime against the fake OpenAI server, real SQLite files.
"""

from __future__ import annotations

import asyncio
import io
import sqlite3
import time
from pathlib import Path
from typing import Any

from agent_support import make_settings, of, run_turn
from fakeopenai import FakeOpenAI, call, text_reply, tool_reply
from polling import until

from weclaw_desktop.agent.call_times import format_seconds, running_ms, timing_parts
from weclaw_desktop.agent.export.render import export_markdown
from weclaw_desktop.agent.transcript import load_transcript
from weclaw_desktop.commands.chat import TextPrinter
from weclaw_desktop.i18n import set_language
from weclaw_desktop.toolkit.approval import ApprovalDecision, ApprovalRequest, ApprovalResult
from weclaw_desktop.tools._db import forget_database

WAIT_S = 0.7  # the person thinks this long before answering
WORK_S = 0.3  # the tool's own work (faulty_sleep)


class SlowPerson:
    """A gate that answers after WAIT_S, like a person reading the dialog."""

    def __init__(self, decision: ApprovalDecision) -> None:
        self.decision = decision
        self.asked = 0
        self.took_ms = 0.0  # measured here (a Qt timer may fire a little early: the wait is what it took)

    async def request(self, req: ApprovalRequest) -> ApprovalResult:
        self.asked += 1
        t0 = time.perf_counter()
        await asyncio.sleep(WAIT_S)
        self.took_ms += (time.perf_counter() - t0) * 1000
        return ApprovalResult(self.decision, decided_by="user", note="" if self.decision.allowed else "not now")


def _asking(fake: FakeOpenAI) -> Any:
    settings = make_settings(fake)
    settings.agent.approvals.tool_rules = {"faulty_sleep": "ask"}  # a call that works a measurable while, asked
    return settings


async def _approved_turn(rt: Any, fake: FakeOpenAI) -> tuple[Any, str]:
    fake.push(tool_reply(call("faulty_sleep", {"seconds": WORK_S}, id="nap")), text_reply("rested"))
    done, events, sid = await run_turn(rt, "take a nap")
    assert done.reason == "completed"
    return of(events, "tool_call_finished")[0], sid


async def test_an_approved_call_stores_its_wait_apart_from_its_running_time(
    fake_openai: FakeOpenAI, make_runtime: Any
) -> None:
    """The measured wait is stored in the history and the audit, read back the same, and the running time
    shown everywhere is the whole minus the wait."""
    gate = SlowPerson(ApprovalDecision.ALLOW_ONCE)
    rt = await make_runtime(_asking(fake_openai), gate=gate)
    finished, sid = await _approved_turn(rt, fake_openai)
    assert gate.asked == 1
    waited, whole = finished.waited_ms, finished.duration_ms
    assert waited is not None and gate.took_ms <= waited < whole  # the person's time, part of the whole
    assert waited - gate.took_ms < 250  # and not much else (the dialog's own bookkeeping)
    run = running_ms(whole, waited)
    assert WORK_S * 1000 * 0.5 <= run < WAIT_S * 1000  # the tool's own work (timers may fire early), not the wait

    stored = (await rt.tool_calls(sid))[0]
    assert (stored.duration_ms, stored.waited_ms) == (whole, waited)
    audit = (await rt.audit.records(session_id=sid))[0]
    assert (audit.duration_ms, audit.waited_ms) == (whole, waited)
    shown = (await load_transcript(rt.db, sid)).calls[0]
    assert (shown.status, shown.duration_ms, shown.waited_ms) == ("success", whole, waited)

    set_language("en")
    said = [format_seconds(run / 1000), f"waited {format_seconds(waited / 1000)} for approval"]
    assert timing_parts(shown.status, shown.duration_ms, shown.waited_ms) == said
    out = io.StringIO()
    TextPrinter(out).event(finished)  # the line `weclaw chat` prints for this call
    assert out.getvalue() == f"  ✓ faulty_sleep success {said[0]} · {said[1]}  slept\n"
    md = await export_markdown(rt.history, sid)
    assert f"`faulty_sleep` — success, {said[0]}, {said[1]}" in md
    assert format_seconds(whole / 1000) not in md.split("`faulty_sleep`")[1].splitlines()[0]  # not the total

    set_language("zh")
    try:
        assert timing_parts("success", whole, waited) == [
            format_seconds(run / 1000),
            f"等待批准 {format_seconds(waited / 1000)}",
        ]
        assert "秒" in format_seconds(waited / 1000)
    finally:
        set_language("en")


async def test_a_denied_call_keeps_its_wait_but_shows_no_running_time(
    fake_openai: FakeOpenAI, make_runtime: Any
) -> None:
    """A denial after a long look is stored with the wait (it is a fact), but a denied call never ran:
    neither the CLI nor the export gives it a running time."""
    gate = SlowPerson(ApprovalDecision.DENY)
    rt = await make_runtime(_asking(fake_openai), gate=gate)
    fake_openai.push(tool_reply(call("faulty_sleep", {"seconds": WORK_S}, id="nap")), text_reply("ok, awake"))
    _done, events, sid = await run_turn(rt, "take a nap")
    finished = of(events, "tool_call_finished")[0]
    assert finished.status == "denied" and finished.waited_ms is not None and finished.waited_ms >= gate.took_ms
    stored = (await rt.tool_calls(sid))[0]
    assert stored.waited_ms == finished.waited_ms
    assert timing_parts("denied", stored.duration_ms, stored.waited_ms) == []
    out = io.StringIO()
    TextPrinter(out).event(finished)
    assert out.getvalue().startswith("  ✗ faulty_sleep denied  ")
    md = await export_markdown(rt.history, sid)
    assert "`faulty_sleep` — denied\n" in md


async def test_a_call_that_needed_no_approval_stores_a_zero_wait(fake_openai: FakeOpenAI, make_runtime: Any) -> None:
    """No one was asked: the wait is a known zero (not "unknown"), and the running time is the whole."""
    rt = await make_runtime()
    fake_openai.push(tool_reply(call("echo_say", {"text": "hi"})), text_reply("said"))
    _done, events, sid = await run_turn(rt, "say hi")
    finished = of(events, "tool_call_finished")[0]
    assert finished.waited_ms == 0.0
    stored = (await rt.tool_calls(sid))[0]
    assert stored.waited_ms == 0.0
    assert timing_parts("success", stored.duration_ms, stored.waited_ms) == [format_seconds(stored.duration_ms / 1000)]


def _downgrade(path: Path) -> None:
    """Make the file what a version before the stored wait left: no waited_ms columns, older schema versions."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("ALTER TABLE tool_calls DROP COLUMN waited_ms")
        conn.execute("ALTER TABLE audit DROP COLUMN waited_ms")
        conn.execute("DELETE FROM schema_version WHERE component='history.calls'")
        conn.execute("UPDATE schema_version SET version=2 WHERE component='audit'")
        conn.commit()
    finally:
        conn.close()


def _columns(path: Path, table: str) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
    finally:
        conn.close()


async def test_an_old_database_opens_and_its_calls_show_the_total_as_before(
    fake_openai: FakeOpenAI, make_runtime: Any
) -> None:
    """A history written before the wait was stored: it opens (the columns are added), its calls read as
    "no wait known" and show the whole duration as before; a new call in it stores its wait."""
    rt = await make_runtime(_asking(fake_openai), gate=SlowPerson(ApprovalDecision.ALLOW_ONCE))
    finished, sid = await _approved_turn(rt, fake_openai)
    path = Path(rt.db.path)
    await rt.close()
    forget_database(path)  # as a restart does: the next runtime opens the file afresh
    _downgrade(path)
    assert "waited_ms" not in _columns(path, "tool_calls") | _columns(path, "audit")

    gate = SlowPerson(ApprovalDecision.ALLOW_ONCE)
    again = await make_runtime(_asking(fake_openai), gate=gate)
    assert "waited_ms" in _columns(path, "tool_calls") and "waited_ms" in _columns(path, "audit")
    shown = (await load_transcript(again.db, sid)).calls[0]
    assert (shown.status, shown.duration_ms, shown.waited_ms) == ("success", finished.duration_ms, None)
    assert timing_parts(shown.status, shown.duration_ms, shown.waited_ms) == [
        format_seconds(finished.duration_ms / 1000)  # the total, as an older version showed it
    ]
    assert (await again.audit.records(session_id=sid))[0].waited_ms is None
    md = await export_markdown(again.history, sid)
    assert f"`faulty_sleep` — success, {format_seconds(finished.duration_ms / 1000)}\n" in md

    fake_openai.push(tool_reply(call("faulty_sleep", {"seconds": 0}, id="again")), text_reply("rested again"))
    await run_turn(again, "nap again", sid)
    newer = next(c for c in (await load_transcript(again.db, sid)).calls if c.call_id == "again")
    assert newer.waited_ms is not None and newer.waited_ms >= gate.took_ms > 0


class NeverAnswers:
    """A person who walks away from the dialog."""

    def __init__(self) -> None:
        self.asked_at = 0.0

    async def request(self, req: ApprovalRequest) -> ApprovalResult:
        self.asked_at = time.perf_counter()
        await asyncio.Event().wait()
        raise AssertionError("never answered")


async def test_stop_during_the_question_stores_the_wait_so_far(fake_openai: FakeOpenAI, make_runtime: Any) -> None:
    """Stop while the approval question is open: the call is stored as cancelled with the time it had waited
    (history and audit agree), so the reopened card can say so; the turn and the session stay usable."""
    gate = NeverAnswers()
    rt = await make_runtime(_asking(fake_openai), gate=gate)
    session = await rt.create_session()
    fake_openai.push(tool_reply(call("faulty_sleep", {"seconds": WORK_S}, id="nap")))
    events: list[Any] = []
    handle = rt.start_turn(session.id, "take a nap", on_event=events.append)
    await until(lambda: gate.asked_at, within=10)
    await asyncio.sleep(WAIT_S)
    stopped_after_ms = (time.perf_counter() - gate.asked_at) * 1000
    handle.cancel()
    assert (await handle.wait()).reason == "cancelled"

    finished = of(events, "tool_call_finished")[0]
    assert finished.status == "cancelled" and finished.waited_ms is not None
    assert WAIT_S * 1000 * 0.85 <= finished.waited_ms <= stopped_after_ms + 250
    stored = (await rt.tool_calls(session.id))[0]
    audit = (await rt.audit.records(session_id=session.id))[0]
    assert stored.status == "cancelled" and stored.waited_ms == audit.waited_ms == finished.waited_ms
    assert stored.duration_ms == audit.duration_ms >= stored.waited_ms
    shown = (await load_transcript(rt.db, session.id)).calls[0]
    assert timing_parts(shown.status, shown.duration_ms, shown.waited_ms)[-1] == (
        f"waited {format_seconds(finished.waited_ms / 1000)} for approval"
    )
    fake_openai.push(text_reply("awake"))
    done, _events, _sid = await run_turn(rt, "never mind", session.id)
    assert done.reason == "completed"
