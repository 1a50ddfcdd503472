"""History restores the whole conversation: reopening a chat, and restarting the app, show it as it was."""

from __future__ import annotations

from typing import Any

from fakeopenai import FakeOpenAI, call, error_reply, hang_reply, text_reply, tool_reply
from PySide6.QtWidgets import QPushButton
from uihelpers import configured_settings, until

from weclaw_desktop.ui.approval_dialog import ApprovalDialog
from weclaw_desktop.ui.chat_view import CallItem, MessageItem, NoticeItem


async def _eventful_chat(window: Any, fake: FakeOpenAI) -> str:
    """A chat with a produced file, a denied call, a stopped answer and a provider error."""
    fake.push(tool_reply(call("work_report", {"name": "r.txt", "text": "hi"})), text_reply("Done: **report** written."))
    c = window.controller
    await c.send("write a report")
    await until(lambda: not window.composer.busy, what="turn 1")
    dialogs: list[ApprovalDialog] = []
    window.gate.listeners.append(dialogs.append)
    fake.push(tool_reply(call("echo_shout", {"text": "loud"})), text_reply("ok, not shouting"))
    await c.send("shout it")
    await until(lambda: dialogs, what="approval dialog")
    dialogs[0].deny_button.click()
    await until(lambda: not window.composer.busy, what="turn 2")
    fake.push(hang_reply("partial answer "))
    await c.send("write an essay")
    await until(lambda: fake.hanging.is_set(), what="stream hanging")
    await until(lambda: window.chat.current is not None and "partial" in window.chat.current.text)
    c.stop()
    await until(lambda: not window.composer.busy, what="turn 3 stopped")
    fake.push(error_reply(500, "the model server broke"))
    await c.send("try again")
    await until(lambda: not window.composer.busy, what="turn 4")
    await c.idle()
    return str(c.session_id)


def _shape(window: Any) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for item in window.chat.items:
        if isinstance(item, MessageItem):
            out.append((item.role, f"{item.text.strip()}|{item.status}"))
        elif isinstance(item, CallItem):
            out.append(("call", f"{item.call.function}|{item.call.status}"))
        elif isinstance(item, NoticeItem):
            out.append(("notice", f"{item.kind}|{item.message}"))
    return out


def _check_restored(window: Any) -> None:
    shape = _shape(window)
    assert [k for k, _ in shape] == [
        "user", "call", "assistant",  # turn 1
        "user", "call", "assistant",  # turn 2 (denied)
        "user", "assistant", "notice",  # turn 3 (stopped: the cut-off text, then "Stopped.")
        "user", "notice",  # turn 4 (the provider's error)
    ]  # fmt: skip
    assert shape[2] == ("assistant", "Done: **report** written.|complete")
    assert shape[7] == ("assistant", "partial answer|cancelled")
    assert shape[8] == ("notice", "warning|Stopped.")
    assert shape[10][1].startswith("error|Error: ")

    calls = list(window.chat.calls)
    report = window.chat.card(calls[0])
    assert report.call.status == "success" and report.status.text().startswith("Succeeded")
    assert report.result.text().startswith("wrote r.txt")
    assert "name: r.txt" in report.arguments.text()
    assert len(report._file_rows) == 1
    buttons = [b.text() for b in report._file_rows[0].findChildren(QPushButton)]
    assert buttons == ["Open", "Show in folder", "Send to phone"]
    denied = window.chat.card(calls[1])
    assert denied.call.status == "denied" and denied.status.text() == "Denied"
    assert denied.why.text() == "You denied this call, so it did not run."  # the user's words, not the model's
    assert "did not allow" not in denied.result.text()
    stopped = window.chat.message_widget(window.chat.messages[5])
    assert stopped.status_line.isVisibleTo(stopped) and stopped.status_line.text() == "Stopped here."
    answer = window.chat.message_widget(window.chat.messages[1])
    assert "font-weight:700" in answer.body.to_html()  # Markdown rendered, not raw


async def test_reopening_a_chat_restores_cards_notices_and_marks(make_window: Any, fake_openai: FakeOpenAI) -> None:
    """What must survive leaving a chat and coming back: every card with its status, arguments, result and
    file buttons, the denial in the user's words, the stopped answer marked as cut off, and the notices."""
    window = await make_window(configured_settings(fake_openai))
    first = await _eventful_chat(window, fake_openai)
    live = _shape(window)
    await window.controller.new_session()
    assert window.chat.items == [] and window.stack.currentWidget() is window.welcome
    await window.controller.open_session(first)
    assert window.stack.currentWidget() is window.chat
    assert _shape(window) == live  # exactly what was shown live
    _check_restored(window)


async def test_after_a_restart_the_last_chat_is_shown_and_continued_visibly(
    make_window: Any, fake_openai: FakeOpenAI
) -> None:
    """A restart shows the last chat with its content (never the empty welcome over a selected chat), and
    the next message goes to that chat, visibly appended to it."""
    window = await make_window(configured_settings(fake_openai))
    first = await _eventful_chat(window, fake_openai)
    window.quit_app()
    await window.controller.shutdown()

    again = await make_window(configured_settings(fake_openai))
    await until(lambda: again.controller.session_id == first and again.chat.has_content, what="last chat shown")
    assert again.stack.currentWidget() is again.chat
    assert again.sidebar.list.currentItem() is not None
    _check_restored(again)
    before = len(again.chat.items)
    fake_openai.push(text_reply("still here"))
    await again.controller.send("are you there?")
    await until(lambda: not again.composer.busy)
    assert again.controller.session_id == first
    assert len(again.chat.items) == before + 2  # the question and the answer, after the old content
    sent = fake_openai.messages(-1)
    assert [m["content"] for m in sent if m["role"] == "user"][-1] == "are you there?"
    assert any(m["role"] == "user" and m["content"] == "write a report" for m in sent)  # the chat it shows


async def test_with_no_chats_a_restart_shows_the_welcome(make_window: Any, fake_openai: FakeOpenAI) -> None:
    window = await make_window(configured_settings(fake_openai))
    await window.controller.idle()
    assert window.controller.session_id == "" and window.stack.currentWidget() is window.welcome
