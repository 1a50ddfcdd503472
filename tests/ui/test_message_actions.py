"""Message actions in the real window (offscreen Qt, qasync, the real runtime and SQLite, the fake OpenAI server):
edit-and-resend makes a branch and only the active branch is sent; paging "‹ 1/2 ›" shows the other version and a
message sent from there continues that branch; regenerate keeps both answers; Retry on an error notice sends the
message again; delete removes an exchange (after asking); copy puts the Markdown (and a code block's code) on the
clipboard; a chat opened again shows the active branch with the sent files' chips.

What must survive: the model never sees a version the user moved away from; no version is lost by editing,
regenerating or paging; nothing is deleted without a yes."""

from __future__ import annotations

from typing import Any

from fakeopenai import FakeOpenAI, error_reply, text_reply
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMessageBox
from uihelpers import configured_settings, until

from weclaw_desktop.ui.chat.items import MessageItem
from weclaw_desktop.ui.message_actions import ActionBar


async def send(window: Any, qtbot: Any, text: str) -> None:
    turns = window.controller.turns_started
    qtbot.keyClicks(window.composer.edit, text)
    qtbot.keyClick(window.composer.edit, Qt.Key.Key_Return)
    await settle(window, turns)


async def settle(window: Any, turns: int) -> None:
    """Until the turn after the ``turns`` started before has ended and the chat shows its result."""
    controller = window.controller
    await until(lambda: controller.turns_started > turns and controller.handle is None, what="the turn")
    await controller.idle()


def shown(window: Any) -> list[tuple[str, str]]:
    return [(i.role, i.text) for i in window.chat.message_items()]


def item(window: Any, role: str, text: str) -> MessageItem:
    return next(i for i in window.chat.message_items() if i.role == role and i.text == text)


def bar(window: Any, it: MessageItem) -> ActionBar:
    got = window.chat.message_widget(it).findChild(ActionBar)
    assert got is not None, f"no action bar on {it.role} {it.text!r}"
    return got


def sent(fake: FakeOpenAI, request: int = -1) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in fake.messages(request) if m["role"] in ("user", "assistant")]


async def test_edit_makes_a_branch_and_only_the_active_branch_is_sent(
    make_window: Any, fake_openai: FakeOpenAI, qtbot: Any
) -> None:
    window = await make_window(configured_settings(fake_openai))
    fake_openai.push(text_reply("A1"), text_reply("A2"), text_reply("B1"), text_reply("A3"))
    await send(window, qtbot, "first")
    await send(window, qtbot, "second")
    first = item(window, "user", "first")
    await until(lambda: "edit" in bar(window, first).buttons, what="edit offered")
    bar(window, first).buttons["edit"].click()
    composer = window.composer
    assert composer.editing == first.run_id and composer.edit.toPlainText() == "first"
    assert composer.edit_bar.isVisible()
    composer.edit.selectAll()
    qtbot.keyClicks(composer.edit, "first, edited")
    turns = window.controller.turns_started
    qtbot.keyClick(composer.edit, Qt.Key.Key_Return)
    await settle(window, turns)
    # the edited version replaced the old one (and what followed) on screen and in the request
    assert sent(fake_openai) == [("user", "first, edited")]
    assert shown(window) == [("user", "first, edited"), ("assistant", "B1")]
    edited = item(window, "user", "first, edited")
    await until(lambda: bar(window, edited).pager is not None, what="the pager")
    assert bar(window, edited).pager.text() == "2/2"  # type: ignore[union-attr]
    assert not bar(window, edited).buttons["next"].isEnabled()
    # back to the first version: the old exchange comes back whole
    bar(window, edited).buttons["previous"].click()
    await until(lambda: shown(window)[0] == ("user", "first"), what="the first version")
    await window.controller.idle()
    assert shown(window) == [("user", "first"), ("assistant", "A1"), ("user", "second"), ("assistant", "A2")]
    assert bar(window, item(window, "user", "first")).pager.text() == "1/2"  # type: ignore[union-attr]
    # a message from here continues this branch: the edited version is not sent
    await send(window, qtbot, "third")
    assert sent(fake_openai) == [
        ("user", "first"),
        ("assistant", "A1"),
        ("user", "second"),
        ("assistant", "A2"),
        ("user", "third"),
    ]
    # reopened, the chat shows the active branch
    sid = window.controller.session_id
    await window.controller.new_session()
    await window.controller.open_session(sid)
    await window.controller.idle()
    assert [t for _r, t in shown(window)] == ["first", "A1", "second", "A2", "third", "A3"]


async def test_regenerate_keeps_both_answers(make_window: Any, fake_openai: FakeOpenAI, qtbot: Any) -> None:
    window = await make_window(configured_settings(fake_openai))
    fake_openai.push(text_reply("the first answer"), text_reply("another **answer**"))
    await send(window, qtbot, "question")
    answer = item(window, "assistant", "the first answer")
    await until(lambda: "regenerate" in bar(window, answer).buttons, what="regenerate offered")
    turns = window.controller.turns_started
    bar(window, answer).buttons["regenerate"].click()
    await settle(window, turns)
    assert sent(fake_openai) == [("user", "question")]  # the old answer is not sent back
    assert shown(window) == [("user", "question"), ("assistant", "another **answer**")]
    second = item(window, "assistant", "another **answer**")
    await until(lambda: bar(window, second).pager is not None, what="the answer pager")
    assert bar(window, second).pager.text() == "2/2"  # type: ignore[union-attr]
    bar(window, second).buttons["previous"].click()
    await until(lambda: shown(window)[-1] == ("assistant", "the first answer"), what="the first answer again")
    # copy: the answer as Markdown
    await window.controller.idle()
    bar(window, item(window, "assistant", "the first answer")).buttons["next"].click()
    await until(lambda: shown(window)[-1][1] == "another **answer**", what="paged forward")
    await window.controller.idle()
    bar(window, item(window, "assistant", "another **answer**")).buttons["copy"].click()
    clipboard = QGuiApplication.clipboard()
    assert clipboard is not None and clipboard.text() == "another **answer**"


async def test_retry_on_an_error_sends_the_message_again(make_window: Any, fake_openai: FakeOpenAI, qtbot: Any) -> None:
    window = await make_window(configured_settings(fake_openai))
    fake_openai.push(error_reply(400, "the model is overloaded"), text_reply("it worked"))
    await send(window, qtbot, "please answer")
    await until(lambda: any(n.kind == "error" for n in window.chat.notices()), what="the error notice")
    await window.controller.idle()
    notice = next(n for n in window.chat.notices() if n.kind == "error")
    await until(lambda: "action" in notice.data, what="Retry on the notice")
    widget = window.chat.widget_for(notice)
    assert widget.action_link() == "Retry"
    turns = window.controller.turns_started
    widget.trigger_action()
    await settle(window, turns)
    assert sent(fake_openai) == [("user", "please answer")]
    assert shown(window) == [("user", "please answer"), ("assistant", "it worked")]
    assert not [n for n in window.chat.notices() if n.kind == "error"]
    turns = await window.runtime.history.messages(window.controller.session_id, all_branches=True)
    assert [m.content for m in turns if m.role == "user"] == ["please answer"]  # the empty attempt was replaced


async def test_delete_asks_then_removes_the_exchange(make_window: Any, fake_openai: FakeOpenAI, qtbot: Any) -> None:
    window = await make_window(configured_settings(fake_openai))
    fake_openai.push(text_reply("one"), text_reply("two"))
    await send(window, qtbot, "keep me")
    await send(window, qtbot, "delete me")
    doomed = item(window, "user", "delete me")
    await until(lambda: "delete" in bar(window, doomed).buttons, what="delete offered")
    actions = window.message_actions
    bar(window, doomed).buttons["delete"].click()
    assert actions.confirm is not None and actions.confirm.isVisible()
    actions.confirm.button(QMessageBox.StandardButton.Cancel).click()
    await window.controller.idle()
    assert len(shown(window)) == 4  # "no" deletes nothing
    bar(window, item(window, "user", "delete me")).buttons["delete"].click()
    actions.confirm.button(QMessageBox.StandardButton.Yes).click()
    await until(lambda: len(shown(window)) == 2, what="the exchange gone")
    await window.controller.idle()
    assert shown(window) == [("user", "keep me"), ("assistant", "one")]
    stored = await window.runtime.history.messages(window.controller.session_id, all_branches=True)
    assert [m.content for m in stored] == ["keep me", "one"]


async def test_code_blocks_have_a_copy_link(make_window: Any, fake_openai: FakeOpenAI, qtbot: Any) -> None:
    """The link carries the code exactly (quotes, %, &, <, non-ASCII); a copy link the model writes itself is not
    kept as a link (it could put other text on the clipboard)."""
    import re

    from PySide6.QtCore import QUrl

    from weclaw_desktop.ui.markdown import copied_text

    window = await make_window(configured_settings(fake_openai))
    code = 'print("50% & <done>")\nx = {"a": [1, 2]}  # ünïcode 中文'
    forged = "[click](weclaw-copy:" + "cm0gLXJmIH4=" + ")"
    fake_openai.push(text_reply(f"Here:\n\n```python\n{code}\n```\n\n{forged}"))
    await send(window, qtbot, "code please")
    answer = next(i for i in window.chat.message_items() if i.role == "assistant")
    view = window.chat.message_widget(answer).view
    hrefs = re.findall(r'href="(weclaw-copy:[^"]*)"', view.toHtml())
    assert len(hrefs) == 1 and copied_text(hrefs[0]) == code
    view.anchorClicked.emit(QUrl(hrefs[0]))
    clipboard = QGuiApplication.clipboard()
    assert clipboard is not None and clipboard.text() == code


async def test_each_answer_shows_its_tokens_estimated_when_the_endpoint_sends_none(
    make_window: Any, fake_openai: FakeOpenAI, qtbot: Any
) -> None:
    """Measured usage is shown as sent; without usage the count is estimated and marked "≈" (never "0")."""
    window = await make_window(configured_settings(fake_openai))
    fake_openai.push(
        text_reply("measured", usage={"prompt_tokens": 1234, "completion_tokens": 56, "total_tokens": 1290}),
        text_reply("estimated answer"),
    )
    await send(window, qtbot, "one")
    await send(window, qtbot, "two")
    first, second = (bar(window, item(window, "assistant", t)) for t in ("measured", "estimated answer"))
    await until(lambda: first.usage is not None and second.usage is not None, what="the token counts")
    assert first.usage.text() == "1,234 sent · 56 received"  # type: ignore[union-attr]
    label = second.usage.text()  # type: ignore[union-attr]
    assert label.startswith("≈") and "received" in label and "≈0 " not in label


async def test_an_edit_that_cannot_start_shows_the_chat_as_stored(
    make_window: Any, fake_openai: FakeOpenAI, qtbot: Any
) -> None:
    """The exchange was deleted elsewhere (another window, the CLI) before the edit was sent: the chat is shown
    again as the history has it, with the reason; nothing else is lost."""
    window = await make_window(configured_settings(fake_openai))
    fake_openai.push(text_reply("one"), text_reply("two"))
    await send(window, qtbot, "keep")
    await send(window, qtbot, "gone elsewhere")
    doomed = item(window, "user", "gone elsewhere")
    await until(lambda: "edit" in bar(window, doomed).buttons, what="edit offered")
    await window.runtime.delete_turn(window.controller.session_id, doomed.run_id)
    got = await window.message_actions.resend(doomed.run_id, "edited", [])
    assert got is None
    await window.controller.idle()
    assert shown(window) == [("user", "keep"), ("assistant", "one")]
    assert any("no turn" in str(n.message) for n in window.chat.notices())
    assert len(fake_openai.requests) == 2  # nothing was sent


def _bar_state(b: ActionBar) -> tuple[Any, ...]:
    """Everything a user sees of a bar: its buttons in order with their tooltips and states, pager, usage."""
    from PySide6.QtWidgets import QLabel, QToolButton

    row = []
    for i in range(b.row.count()):
        w = b.row.itemAt(i).widget()
        if isinstance(w, QToolButton):
            row.append((w.objectName(), w.toolTip(), w.isEnabled(), w.isVisibleTo(b)))
        elif isinstance(w, QLabel):
            row.append(("label", w.text(), w.toolTip()))
    return tuple(row)


async def test_scrolled_messages_get_their_own_action_bars(make_window: Any, fake_openai: FakeOpenAI) -> None:
    """Message widgets are rebound while scrolling and keep their action bar aside for the next message: every
    bar on screen must look exactly like a bar made fresh for its message (buttons, tooltips, pager position,
    usage) and its buttons must act on that message — never on the one the widget showed before."""
    from weclaw_desktop.agent.history_branches import BranchInfo
    from weclaw_desktop.agent.usage import UsageSum
    from weclaw_desktop.ui.chat.message_widget import MessageWidget

    window = await make_window(configured_settings(fake_openai))
    chat, actions = window.chat, window.message_actions
    pairs = []
    for i in range(150):
        pairs += [("user", f"question {i}"), ("assistant", f"answer {i} " + "words " * (i % 30))]
    chat.load_history(pairs)
    for n, it in enumerate(chat.message_items()):
        it.run_id = f"run{n // 2}"
    infos = {}
    for t in range(150):  # every third exchange has versions: pagers of several shapes and positions
        if t % 3 == 0:
            infos[f"run{t}"] = BranchInfo(
                f"run{t}", edit_index=1 + t % 2, edit_count=2, answer_index=1, answer_count=1 + t % 4
            )
    actions.infos = infos
    actions.usage = {f"run{t}": UsageSum(prompt_tokens=100 + t, completion_tokens=t) for t in range(0, 150, 5)}
    actions.mark()  # the last answer of each exchange, the last run (regenerate)
    chat.rebuild()
    await until(lambda: chat.at_end and chat.live_widgets(), what="the end shown")
    bar_ = chat.verticalScrollBar()
    checked = reused = 0
    copied = []
    from weclaw_desktop.ui import message_actions as ma

    original_copy = ma.copy_text
    ma.copy_text = copied.append  # type: ignore[assignment]
    try:
        while True:
            await until(lambda: not chat._idle.isActive(), what="idle")
            for it, widget in chat.live_widgets():
                if not isinstance(widget, MessageWidget) or widget.isHidden():
                    continue
                got = widget.findChildren(ActionBar)
                assert len(got) == 1, "one bar per message, no old one left among its children"
                fresh = MessageWidget(it, chat._renderer)
                actions.decorate(fresh)
                want = fresh.findChild(ActionBar)
                assert want is not None
                assert _bar_state(got[0]) == _bar_state(want), f"{it.role} {it.text[:12]!r}: another message's bar"
                fresh.deleteLater()
                info = infos.get(it.run_id)
                if info is not None and it.role == "user":  # the position of this message, not a fresh bar's
                    assert got[0].pager is not None and got[0].pager.text() == f"{info.edit_index}/{info.edit_count}"
                    assert got[0].buttons["next"].isEnabled() == (info.edit_index < info.edit_count)
                    assert got[0].buttons["previous"].isEnabled() == (info.edit_index > 1)
                got[0].buttons["copy"].click()
                assert copied[-1] == it.text, "Copy copied another message"
                checked += 1
            if bar_.value() == 0:
                break
            bar_.setValue(bar_.value() - chat.viewport().height() // 2)
    finally:
        ma.copy_text = original_copy
    reused = chat.rebound
    assert checked > 150 and reused > 50
