"""The GUI's answers to a server: the elicitation form generated from the requested schema (checked before
it is sent; Submit / Decline / Cancel / closing) and the sampling approval (showing what is asked), as real
widgets offscreen, awaited without exec()."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication, QCheckBox, QComboBox, QLineEdit, QListWidget

from weclaw_desktop.i18n import set_language
from weclaw_desktop.mcp.interact import FormRequest, SamplingRequest, UrlRequest, form_fields
from weclaw_desktop.ui.mcp_dialogs import ElicitationDialog, QtUserAgent, SamplingDialog

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "minLength": 1},
        "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150},
        "color": {"type": "string", "title": "Colour", "enum": ["red", "green"], "enumNames": ["Red", "Green"]},
        "subscribe": {"type": "boolean", "title": "News", "default": True},
        "tags": {"type": "array", "title": "Tags", "items": {"enum": ["a", "b", "c"]}},
    },
    "required": ["name", "color"],
}


@pytest.fixture(autouse=True)
def _as_the_app(qtbot: Any) -> Any:
    """Closing a dialog must not quit the loop: the app quits explicitly, never on "last window closed"."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    before = app.quitOnLastWindowClosed()
    app.setQuitOnLastWindowClosed(False)
    yield
    app.setQuitOnLastWindowClosed(before)


def _form() -> FormRequest:
    return FormRequest(server="sdk", message="Who are you?", fields=form_fields(SCHEMA), schema=SCHEMA)


async def _opened(agent: QtUserAgent, start: Any) -> tuple[asyncio.Task[Any], Any]:
    shown: list[Any] = []
    agent.listeners.append(shown.append)
    task = asyncio.ensure_future(start)
    for _ in range(200):
        if shown:
            break
        await asyncio.sleep(0.01)
    assert shown, "no dialog opened"
    return task, shown[0]


async def test_the_form_is_checked_then_sent(qtbot: Any) -> None:
    agent = QtUserAgent()
    task, dialog = await _opened(agent, agent.elicit(_form()))
    assert isinstance(dialog, ElicitationDialog) and dialog.isVisible()
    name, age, color, news, tags = (dialog.inputs[k] for k in ("name", "age", "color", "subscribe", "tags"))
    assert isinstance(name, QLineEdit) and isinstance(age, QLineEdit) and isinstance(color, QComboBox)
    assert isinstance(news, QCheckBox) and news.isChecked() and isinstance(tags, QListWidget)
    assert [color.itemText(i) for i in range(color.count())] == ["Red", "Green"]  # required: no empty choice
    age.setText("200")
    dialog.submit_button.click()
    assert not task.done() and dialog.problems.isVisible()  # refused before anything is sent
    assert "age: 200 is greater than the maximum of 150" in dialog.problems.text()
    assert "name: '' " not in dialog.problems.text()  # an empty optional field is left out, a required one named
    name.setText("李雷")
    age.setText("30")
    color.setCurrentIndex(1)
    tags.item(2).setCheckState(tags.item(2).checkState().Checked)
    dialog.submit_button.click()
    answer = await asyncio.wait_for(task, 5)
    assert answer.action == "accept"
    assert answer.content == {"name": "李雷", "age": 30, "color": "green", "subscribe": True, "tags": ["c"]}
    assert agent.open_dialogs == []


async def test_decline_cancel_and_closing(qtbot: Any) -> None:
    agent = QtUserAgent()
    task, dialog = await _opened(agent, agent.elicit(_form()))
    dialog.decline_button.click()
    assert (await asyncio.wait_for(task, 5)).action == "decline"
    task, dialog = await _opened(agent, agent.elicit(_form()))
    dialog.close()  # the window's close box
    answer = await asyncio.wait_for(task, 5)
    assert answer.action == "cancel" and answer.content is None
    task, dialog = await _opened(agent, agent.elicit(_form()))
    task.cancel()  # the turn was stopped: the dialog goes away, nothing is answered
    await asyncio.sleep(0.05)
    assert agent.open_dialogs == []


async def test_a_url_request_shows_the_address(qtbot: Any, monkeypatch: Any) -> None:
    from PySide6.QtGui import QDesktopServices

    opened: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toString()) or True)
    agent = QtUserAgent()
    request = UrlRequest(server="sdk", message="Sign in to continue", url="https://example.com/login?x=1")
    task, dialog = await _opened(agent, agent.elicit(request))
    assert dialog.url.text() == request.url and dialog.submit_button.text() == "Open"
    dialog.submit_button.click()
    assert (await asyncio.wait_for(task, 5)).action == "accept" and opened == [request.url]


async def test_sampling_shows_what_is_asked_and_closing_refuses(qtbot: Any) -> None:
    agent = QtUserAgent()
    request = SamplingRequest(
        server="sdk", messages=(("user", "Summarise: cats"),), system_prompt="One line.", max_tokens=50
    )
    task, dialog = await _opened(agent, agent.approve_sampling(request))
    assert isinstance(dialog, SamplingDialog)
    assert dialog.content.toPlainText() == "[system] One line.\n\n[user] Summarise: cats"
    assert "50" in dialog.body.text()
    dialog.send_button.click()
    assert await asyncio.wait_for(task, 5) is True
    task, dialog = await _opened(agent, agent.approve_sampling(request))
    dialog.close()
    assert await asyncio.wait_for(task, 5) is False


def test_the_dialogs_follow_the_language(qtbot: Any) -> None:
    dialog = ElicitationDialog(_form())
    qtbot.addWidget(dialog)
    assert dialog.submit_button.text() == "Send"
    set_language("zh")
    dialog.retranslate()
    assert dialog.submit_button.text() == "提交" and "sdk" in dialog.heading.text()
    assert dialog.windowTitle() == "服务器请求输入"
