"""The Thinking block in the real window, against a DeepSeek-rule server that streams reasoning.

What must survive: while the model thinks, an open block streams the thinking with its elapsed time; it collapses
("Thought for … s") when the answer or a tool call starts; the answer bubble never contains thinking; one block
per round that thought; Copy puts exactly the thinking on the clipboard; reopening the chat shows every block
again (collapsed, with its stored duration); the header follows a live language switch; a model marked without
tools gets a notice saying so.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "providers"))

from provider_servers import Call, RuleServer, deepseek_rule, turn_reply
from PySide6.QtGui import QGuiApplication
from uihelpers import until

from weclaw_desktop.i18n import set_language
from weclaw_desktop.settings import ModelCapabilitySettings, Settings
from weclaw_desktop.ui.thinking_block import ThinkingBlock

R1 = "The user wants an echo. I will call echo_say with the text they gave. "
R2 = "The tool answered; now I can reply briefly."


def _settings(server: RuleServer, **provider: Any) -> Settings:
    s = Settings()
    s.provider.preset = "deepseek"
    s.provider.base_url = server.base_url
    s.provider.model = "deepseek-flash"
    s.provider.max_retries = 0
    for key, value in provider.items():
        setattr(s.provider, key, value)
    s.agent.exposure = "all"
    return s


def blocks(window: Any) -> list[ThinkingBlock]:
    """The thinking blocks of the messages shown, in chat order (the chat makes widgets near the screen)."""
    chat = window.chat
    live = sorted(chat.live_widgets(), key=lambda iw: chat.index_of(iw[0]))
    return [w.thinking for _item, w in live if isinstance(getattr(w, "thinking", None), ThinkingBlock)]


async def test_thinking_streams_collapses_is_copyable_and_comes_back(make_window: Any) -> None:
    server = await RuleServer(deepseek_rule).start()
    try:
        slow = turn_reply(
            reasoning=tuple(R1[i : i + 6] for i in range(0, len(R1), 6)), calls=(Call("echo_say", {"text": "hi"}),)
        )
        slow.delay_s = 0.04
        server.push(slow, turn_reply(reasoning=(R2,), text=("It said ", "**hi**.")))
        window = await make_window(_settings(server))
        task = window.controller.spawn(window.controller.send("echo hi"))
        await until(lambda: blocks(window) and len(blocks(window)[0].text) > 12, what="thinking streams")
        live = blocks(window)[0]
        assert live.state == "live" and live.expanded and live.body.isVisible()
        assert live.header_text().startswith("Thinking… ")
        await task
        await until(lambda: not window.composer.busy, what="turn end")
        assert server.rejections == []

        first, second = blocks(window)
        assert (first.text, second.text) == (R1, R2)
        assert all(b.state == "done" and not b.expanded and not b.body.isVisible() for b in (first, second))
        assert first.header_text().startswith("Thought for ") and first.elapsed_s > 0.3
        answer = window.chat.message_widget(window.chat.messages[-1]).plain_text().strip()
        assert answer == "It said hi." and "tool answered" not in answer

        first.toggle.click()
        assert first.expanded and first.body.isVisible() and first.body.toPlainText() == R1
        first.copy_button.click()
        assert QGuiApplication.clipboard().text() == R1
        assert first.copy_button.text() == "Copied"

        set_language("zh")
        await until(lambda: first.toggle.text().startswith("已思考"), what="language switch")
        assert first.copy_button.text() in ("已复制", "复制")
        set_language("en")

        sid = window.controller.session_id
        await window.controller.new_session()
        assert blocks(window) == []
        await window.controller.open_session(sid)
        await until(lambda: len(blocks(window)) == 2, what="restored blocks")
        restored = blocks(window)
        assert [b.text for b in restored] == [R1, R2]
        assert all(b.state == "done" and not b.expanded for b in restored)
        assert restored[0].header_text() == first.header_text()  # the stored duration
    finally:
        await server.stop()


async def test_stopped_while_thinking_says_so(make_window: Any) -> None:
    server = await RuleServer().start()
    try:
        reply = turn_reply(reasoning=tuple("thinking slowly " for _ in range(100)), text=("never",))
        reply.delay_s = 0.05
        server.push(reply)
        window = await make_window(_settings(server))
        window.controller.spawn(window.controller.send("think"))
        await until(lambda: blocks(window) and blocks(window)[0].text, what="thinking starts")
        window.controller.stop()
        await until(lambda: not window.composer.busy, what="stopped")
        [block] = blocks(window)
        assert block.state == "stopped" and block.header_text().startswith("Thinking stopped after ")
    finally:
        await server.stop()


async def test_model_without_tools_gets_a_notice(make_window: Any) -> None:
    server = await RuleServer().start()
    try:
        server.push(turn_reply(text=("I can only talk.",)))
        settings = _settings(server, capabilities={"deepseek-flash": ModelCapabilitySettings(tools=False)})
        window = await make_window(settings)
        await window.controller.send("list files")
        await until(lambda: not window.composer.busy, what="turn end")
        notices = [str(n.message) for n in window.chat.notices()]
        assert any("not supporting tools" in n for n in notices), notices
        assert "tools" not in server.requests[0]
    finally:
        await server.stop()
