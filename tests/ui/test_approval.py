"""Approvals: a high-risk call opens a non-modal dialog that is awaited; Allow runs it, Deny does not."""

from __future__ import annotations

from typing import Any

import shiboken6
from fakeopenai import FakeOpenAI, call, text_reply, tool_reply
from uihelpers import configured_settings, until

from weclaw_desktop.toolkit.approval import ApprovalDecision
from weclaw_desktop.ui.approval_dialog import ApprovalDialog


async def _ask(make_window: Any, fake: FakeOpenAI) -> tuple[Any, list[ApprovalDialog]]:
    fake.push(tool_reply(call("echo_shout", {"text": "loud"})), text_reply("ok"))
    window = await make_window(configured_settings(fake))
    dialogs: list[ApprovalDialog] = []
    window.gate.listeners.append(dialogs.append)
    await window.controller.send("shout it")
    await until(lambda: dialogs, what="approval dialog")
    dialog = dialogs[0]
    assert dialog.isVisible() and not dialog.isModal()
    await until(lambda: dialog.armed, what="the allow buttons armed")
    assert "Echo" in dialog.body.text() and "shout" in dialog.body.text()
    assert "high" in dialog.risk.text()
    assert "text: loud" in dialog.arguments.toPlainText()
    assert window.board.rows["echo"].active[0].status == "awaiting_approval"
    assert window.tool_panel.status_text("echo") == "Needs approval"  # the narrow panel says it short
    return window, dialogs


async def test_allow_once_runs_the_call(make_window: Any, fake_openai: FakeOpenAI, qtbot: Any) -> None:
    window, dialogs = await _ask(make_window, fake_openai)
    dialogs[0].once_button.click()
    await until(lambda: not window.composer.busy)
    card = next(iter(window.chat.cards.values()))
    assert card.call.status == "success"
    assert card.result.text().startswith("LOUD")
    assert window.gate.open_dialogs == []
    assert not shiboken6.isValid(dialogs[0])  # closed and deleted


async def test_deny_does_not_run_the_call(make_window: Any, fake_openai: FakeOpenAI) -> None:
    window, dialogs = await _ask(make_window, fake_openai)
    dialogs[0].deny_button.click()
    await until(lambda: not window.composer.busy)
    card = next(iter(window.chat.cards.values()))
    assert card.call.status == "denied"
    assert card.status.text() == "Denied"
    assert "LOUD" not in card.result.text()
    # the model was told the user said no
    tool_msg = next(m for m in fake_openai.messages(-1) if m["role"] == "tool")
    assert "did not allow" in tool_msg["content"]


async def test_closing_the_dialog_denies(make_window: Any, fake_openai: FakeOpenAI) -> None:
    window, dialogs = await _ask(make_window, fake_openai)
    decisions: list[ApprovalDecision] = []
    dialogs[0].on_decided(decisions.append)
    dialogs[0].close()
    await until(lambda: not window.composer.busy)
    assert decisions == [ApprovalDecision.DENY]
    assert next(iter(window.chat.cards.values())).call.status == "denied"


async def test_allow_for_session_is_remembered_in_this_chat(make_window: Any, fake_openai: FakeOpenAI) -> None:
    window, dialogs = await _ask(make_window, fake_openai)
    dialogs[0].session_button.click()
    await until(lambda: not window.composer.busy)
    fake_openai.push(tool_reply(call("echo_shout", {"text": "again"})), text_reply("ok"))
    await window.controller.send("once more")
    await until(lambda: not window.composer.busy)
    assert len(dialogs) == 1  # not asked a second time
    assert [c.call.status for c in window.chat.cards.values()] == ["success", "success"]


async def test_stop_while_waiting_for_approval_closes_the_dialog(make_window: Any, fake_openai: FakeOpenAI) -> None:
    window, dialogs = await _ask(make_window, fake_openai)
    window.controller.stop()
    await until(lambda: not window.composer.busy)
    await until(lambda: not shiboken6.isValid(dialogs[0]), what="dialog closed")
    assert window.gate.open_dialogs == []
    assert next(iter(window.chat.cards.values())).call.status == "cancelled"
