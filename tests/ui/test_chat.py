"""Chat flow against the fake OpenAI server: send, tool states in the panel, rendering, Stop."""

from __future__ import annotations

from typing import Any

from fakeopenai import FakeOpenAI, call, hang_reply, text_reply, tool_reply
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton
from uihelpers import configured_settings, until

from weclaw_desktop.agent import events as ev


async def test_send_marks_tool_exposed_running_succeeded_and_renders_answer(
    make_window: Any, fake_openai: FakeOpenAI, qtbot: Any
) -> None:
    fake_openai.push(
        tool_reply(
            call("echo_say", {"text": "hello"}), usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        ),
        text_reply(
            "The tool said **hello**.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nprint('x')\n```",
            usage={"prompt_tokens": 20, "completion_tokens": 7, "total_tokens": 27},
        ),
    )
    window = await make_window(configured_settings(fake_openai))
    seen: list[tuple[str, str]] = []
    window.controller.event_received.connect(lambda e: seen.append((e.kind, window.tool_panel.status_text("echo"))))
    assert window.board.state("echo") == "available"

    qtbot.keyClicks(window.composer.edit, "please echo hello")
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
    await until(lambda: window.composer.busy, what="turn start")
    assert window.composer.button.text() == "Stop"
    await until(lambda: not window.composer.busy, what="turn end")

    kinds = [k for k, _ in seen]
    assert kinds[0] == "round_started" and kinds[-1] == "turn_done"
    by_kind: dict[str, str] = {}
    for kind, text in seen:
        by_kind.setdefault(kind, text)  # the first time each event kind arrived
    assert by_kind["round_started"] == "Offered now"
    assert by_kind["tool_call_started"].startswith("Running")
    assert "Succeeded" in by_kind["tool_call_finished"]
    assert window.board.state("echo") == "exposed"
    assert window.board.total_calls() == 1

    # the user's message, then the card, then the rendered answer
    texts = [window.chat.message_widget(m).plain_text() for m in window.chat.messages]
    assert texts[0] == "please echo hello"
    assert "The tool said hello." in texts[-1]
    assert "print('x')" in texts[-1]
    html = window.chat.message_widget(window.chat.messages[-1]).body.to_html()
    assert "<table" in html and "font-weight:700" in html  # table and bold rendered, not raw Markdown
    card = next(iter(window.chat.cards.values()))
    assert card.status.text().startswith("Succeeded")
    assert card.result.text().startswith("hello")
    assert "text: hello" in card.arguments.text()
    assert not card.arguments.isVisible()  # folded until asked
    assert window.tokens_label.text() == "42 tokens"
    # the model got the user's text and the tool result
    assert fake_openai.messages(-1)[-1]["role"] == "tool"
    assert window.composer.button.text() == "Send"


async def test_streaming_renders_only_the_streaming_message_throttled(
    make_window: Any, fake_openai: FakeOpenAI
) -> None:
    pieces = [f"word{i} " for i in range(400)]
    fake_openai.push(text_reply("first answer"), text_reply(*pieces))
    window = await make_window(configured_settings(fake_openai))
    await window.controller.send("one")
    await until(lambda: not window.composer.busy)
    first = window.chat.message_widget(window.chat.messages[1])
    renders_before = first.renders
    await window.controller.send("two")
    await until(lambda: not window.composer.busy)
    streamed = window.chat.message_widget(window.chat.messages[-1])
    assert streamed.plain_text().split()[-1] == "word399"
    assert first.renders == renders_before  # finished messages are never re-rendered
    assert streamed.renders < 60  # 400 deltas, far fewer renders


async def test_stop_cancels_a_streaming_turn(make_window: Any, fake_openai: FakeOpenAI, qtbot: Any) -> None:
    fake_openai.push(hang_reply("partial answer "))
    window = await make_window(configured_settings(fake_openai))
    await window.controller.send("write a long essay")
    await until(lambda: fake_openai.hanging.is_set(), what="stream hanging")
    await until(lambda: window.chat.messages and "partial" in window.chat.messages[-1].text)
    assert window.composer.button.text() == "Stop"
    qtbot.mouseClick(window.composer.button, Qt.MouseButton.LeftButton)
    await until(lambda: not window.composer.busy, what="turn stopped")
    notices = [str(n.message) for n in window.chat.notices()]
    assert "Stopped." in notices
    assert window.composer.button.text() == "Send"
    # the session stays usable
    fake_openai.push(text_reply("fine again"))
    await window.controller.send("hello?")
    await until(lambda: not window.composer.busy)
    assert window.chat.message_widget(window.chat.messages[-1]).plain_text().strip() == "fine again"


async def test_stop_cancels_a_running_tool(make_window: Any, fake_openai: FakeOpenAI) -> None:
    from weclaw_ui_test_tools import WorkTool

    WorkTool.cancelled = 0
    fake_openai.push(tool_reply(call("work_run", {"seconds": 30})))
    window = await make_window(configured_settings(fake_openai))
    await window.controller.send("work hard")
    await until(lambda: window.board.rows["work"].active and window.board.rows["work"].active[0].status == "running")
    await until(lambda: window.board.rows["work"].active[0].fraction is not None, what="progress")
    card = next(iter(window.chat.cards.values()))
    await until(lambda: card.progress.isVisible() and "Running" in window.tool_panel.status_text("work"))
    window.controller.stop()
    await until(lambda: not window.composer.busy, what="turn stopped")
    assert WorkTool.cancelled == 1
    assert card.call.status == "cancelled"
    assert card.status.text().startswith("Cancelled")
    assert window.tool_panel.status_text("work") == "Cancelled"  # compact: no duration in the narrow panel
    assert "Offered to the model" in window.tool_panel.tooltip_for("work")
    assert window.board.running_count() == 0


async def test_produced_files_get_open_and_send_to_phone(make_window: Any, fake_openai: FakeOpenAI) -> None:
    fake_openai.push(tool_reply(call("work_report", {"name": "r.txt", "text": "hi"})), text_reply("done"))
    window = await make_window(configured_settings(fake_openai))
    await window.controller.send("write a report")
    await until(lambda: not window.composer.busy)
    card = next(iter(window.chat.cards.values()))
    assert len(card._file_rows) == 1

    phone = card.findChildren(QPushButton, "SendToPhone")
    assert len(phone) == 1 and not phone[0].isEnabled()
    assert "Pair a phone" in phone[0].toolTip()
    sent: list[list[Any]] = []
    window.set_phone_sender(lambda paths: sent.append(paths))
    assert phone[0].isEnabled()
    phone[0].click()
    assert [p.name for p in sent[0]] == ["r.txt"]
    assert sent[0][0].read_text(encoding="utf-8") == "hi"


async def test_events_of_a_turn_are_the_typed_events(make_window: Any, fake_openai: FakeOpenAI) -> None:
    fake_openai.push(text_reply("hi"))
    window = await make_window(configured_settings(fake_openai))
    got: list[Any] = []
    window.controller.event_received.connect(got.append)
    await window.controller.send("hey")
    await until(lambda: not window.composer.busy)
    assert isinstance(got[-1], ev.TurnDone) and got[-1].reason == "completed"
