"""Window-level behaviour: provider errors, the phone plug-in points, the Calls tab refresh."""

from __future__ import annotations

from typing import Any

from fakeopenai import FakeOpenAI, call, error_reply, text_reply, tool_reply
from uihelpers import configured_settings, until


async def test_a_provider_error_is_shown_and_the_chat_stays_usable(make_window: Any, fake_openai: FakeOpenAI) -> None:
    fake_openai.push(error_reply(401, "Incorrect API key provided"))
    window = await make_window(configured_settings(fake_openai))
    await window.controller.send("hello")
    await until(lambda: not window.composer.busy)
    errors = [str(n.message) for n in window.chat.notices() if n.kind == "error"]
    assert len(errors) == 1 and "key" in errors[0].lower()
    assert window.composer.button.text() == "Send"
    fake_openai.push(text_reply("works now"))
    await window.controller.send("again")
    await until(lambda: not window.composer.busy)
    assert window.chat.message_widget(window.chat.messages[-1]).plain_text().strip() == "works now"


async def test_phone_plug_in_points(make_window: Any, fake_openai: FakeOpenAI) -> None:
    window = await make_window(configured_settings(fake_openai))
    asked: list[bool] = []
    window.phone_requested.connect(lambda: asked.append(True))
    window.phone_action.trigger()
    assert asked == [True]
    assert window.phone_label.text() == "Phone link off"
    window.set_phone_status("waiting")
    assert window.phone_label.text() == "Phone link on"
    window.set_phone_status("connected", "Pixel 7")
    assert window.phone_label.text() == "Pixel 7" and window.phone_state == "connected"


async def test_calls_tab_refreshes_after_a_turn(make_window: Any, fake_openai: FakeOpenAI) -> None:
    fake_openai.push(tool_reply(call("echo_say", {"text": "a"})), text_reply("one"))
    window = await make_window(configured_settings(fake_openai))
    panel = window.tool_panel
    panel.tabs.setCurrentWidget(panel.calls)
    await window.controller.send("go")
    await until(lambda: not window.composer.busy)
    await until(lambda: panel.calls.topLevelItemCount() == 1, what="calls refreshed")
    assert panel.calls.topLevelItem(0).text(1) == "echo_say"
