"""A tool card's running time apart from its wait for approval, live and after reopening or restarting.

What must survive: a call the user approved after a measured wait shows "Succeeded · <running time> · waited
<wait> for approval" live, and exactly the same text when the chat is reopened, after a restart, and in the
Calls tab, in English and in Chinese (the wait is stored with the call, not re-measured). A history written
before the wait was stored still opens and shows the whole duration, as it did before. Real window, real
runtime against the fake OpenAI server, real SQLite file, the real approval dialog.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from fakeopenai import FakeOpenAI, call, text_reply, tool_reply
from uihelpers import configured_settings, until

from weclaw_desktop.agent.call_times import format_seconds
from weclaw_desktop.settings import Settings
from weclaw_desktop.tools._db import forget_database
from weclaw_desktop.ui.approval_dialog import ApprovalDialog

WAIT_S = 0.8  # how long the person looks at the dialog
WORK_S = 0.3  # the tool's own work

WORDS = {"en": ("Succeeded", "waited", "for approval"), "zh": ("成功", "等待批准", "")}


def _settings(fake: FakeOpenAI) -> Settings:
    s = configured_settings(fake)
    s.agent.approvals.tool_rules = {"work_run": "ask"}  # a call that works a measurable while, asked first
    return s


async def _approved_after_a_wait(window: Any, fake: FakeOpenAI) -> tuple[str, Any]:
    """Ask for work_run, look at the dialog for WAIT_S, allow it once; returns (session id, the live card)."""
    fake.push(tool_reply(call("work_run", {"seconds": WORK_S}, id="job")), text_reply("worked"))
    dialogs: list[ApprovalDialog] = []
    window.gate.listeners.append(dialogs.append)
    await window.controller.send("do the job")
    await until(lambda: dialogs, what="approval dialog")
    shown = time.perf_counter()
    await until(lambda: dialogs[0].armed, what="the allow buttons armed")
    await asyncio.sleep(max(0.0, WAIT_S - (time.perf_counter() - shown)))
    dialogs[0].once_button.click()
    await until(lambda: not window.composer.busy, limit_s=15, what="the turn")
    await window.controller.idle()
    return str(window.controller.session_id), window.chat.card("job")


async def _calls_tab(window: Any) -> str:
    window.load_calls()
    await until(lambda: window.tool_panel.calls.topLevelItemCount() > 0, what="the Calls tab filled")
    return str(window.tool_panel.calls.topLevelItem(0).text(2))


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_a_reopened_card_says_what_the_live_card_said(
    make_window: Any, fake_openai: FakeOpenAI, language: str
) -> None:
    """Live, reopened, restarted and in the Calls tab: the same running time and the same wait."""
    window = await make_window(_settings(fake_openai), language=language)
    sid, card = await _approved_after_a_wait(window, fake_openai)
    live = card.status.text()
    succeeded, waited, tail = WORDS[language]
    assert card.call.status == "success" and live.startswith(succeeded)
    assert waited in live and tail in live
    call_info = card.call
    assert call_info.waited_s >= WAIT_S * 0.85  # the dialog was open this long
    assert WORK_S * 0.5 <= call_info.elapsed_s() < WAIT_S  # the work (Qt timers may fire early), not the wait
    assert format_seconds(call_info.elapsed_s()) in live and format_seconds(call_info.waited_s) in live
    assert format_seconds(call_info.duration_ms / 1000) not in live  # never the total as the running time
    assert await _calls_tab(window) == live

    window.quit_app()
    await window.controller.shutdown()
    again = await make_window(_settings(fake_openai), language=language)
    await until(lambda: again.controller.session_id == sid and again.chat.has_content, what="last chat shown")
    restarted = again.chat.card("job")
    assert restarted.call.restored and restarted.status.text() == live
    assert await _calls_tab(again) == live

    await again.controller.new_session()
    await again.controller.open_session(sid)
    assert again.chat.card("job").status.text() == live


async def test_an_old_history_still_opens_and_shows_the_total_as_before(
    make_window: Any, fake_openai: FakeOpenAI
) -> None:
    """A database from before the wait was stored (no waited_ms columns, older schema versions): the app
    opens it, the card reads as "no wait known" and shows the whole duration with no wait, as before."""
    window = await make_window(_settings(fake_openai))
    sid, card = await _approved_after_a_wait(window, fake_openai)
    total_ms = card.call.duration_ms
    path = Path(window.runtime.db.path)
    window.quit_app()
    await window.controller.shutdown()
    forget_database(path)  # a restart: the next window opens the file afresh
    conn = sqlite3.connect(path)
    try:  # what an older version left: no waited_ms columns
        conn.execute("ALTER TABLE tool_calls DROP COLUMN waited_ms")
        conn.execute("ALTER TABLE audit DROP COLUMN waited_ms")
        conn.execute("DELETE FROM schema_version WHERE component='history.calls'")
        conn.execute("UPDATE schema_version SET version=2 WHERE component='audit'")
        conn.commit()
    finally:
        conn.close()

    again = await make_window(_settings(fake_openai))
    await until(lambda: again.controller.session_id == sid and again.chat.has_content, what="last chat shown")
    old = again.chat.card("job")
    assert old.call.restored and old.call.waited_s == 0.0
    assert old.status.text() == f"Succeeded · {format_seconds(total_ms / 1000)}"
    assert await _calls_tab(again) == f"Succeeded · {format_seconds(total_ms / 1000)}"


async def test_a_call_stopped_at_the_question_reopens_with_its_wait(make_window: Any, fake_openai: FakeOpenAI) -> None:
    """Stop while the approval dialog is open: the card says how long it waited, live and reopened alike."""
    window = await make_window(_settings(fake_openai))
    fake_openai.push(tool_reply(call("work_run", {"seconds": WORK_S}, id="job")))
    dialogs: list[ApprovalDialog] = []
    window.gate.listeners.append(dialogs.append)
    await window.controller.send("do the job")
    await until(lambda: dialogs, what="approval dialog")
    await asyncio.sleep(WAIT_S)
    window.controller.stop()
    await until(lambda: not window.composer.busy, what="the stop")
    await window.controller.idle()
    sid = str(window.controller.session_id)
    live = window.chat.card("job").status.text()
    assert live.startswith("Cancelled") and "for approval" in live
    await window.controller.new_session()
    await window.controller.open_session(sid)
    assert window.chat.card("job").status.text() == live
