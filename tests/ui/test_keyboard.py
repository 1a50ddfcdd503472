"""Every shortcut does what the overview (Ctrl+/) says, with real key events through Qt's shortcut map."""

from __future__ import annotations

import asyncio
from typing import Any

from fakeopenai import FakeOpenAI, hang_reply, text_reply
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QAbstractItemView, QApplication, QMessageBox
from uihelpers import configured_settings, until

from weclaw_desktop.ui import shortcuts
from weclaw_desktop.ui.chat_view import MessageWidget


def _press(qtbot: Any, widget: Any, sequence: str) -> None:
    """Type a key combination the way a person does (QTest goes through Qt's shortcut map)."""
    combo = QKeySequence(sequence)[0]
    qtbot.keyClick(widget, combo.key(), combo.keyboardModifiers())


async def _window(make_window: Any, fake: FakeOpenAI) -> Any:
    window = await make_window(configured_settings(fake))
    window.activateWindow()
    QApplication.setActiveWindow(window)  # offscreen has no window manager to do it
    await asyncio.sleep(0.05)
    return window


async def test_chat_shortcuts(make_window: Any, fake_openai: FakeOpenAI, qtbot: Any) -> None:
    fake_openai.push(text_reply("The invoice total is **42**.\n\nAnother invoice line."), hang_reply("writing "))
    window = await _window(make_window, fake_openai)
    c = window.controller
    await c.send("sum the invoice")
    await until(lambda: not window.composer.busy)
    first = c.session_id

    # Up in the empty composer: the last message comes back to be edited
    window.composer.edit.setFocus()
    _press(qtbot, window.composer.edit, "Up")
    assert window.composer.edit.toPlainText() == "sum the invoice"
    window.composer.edit.clear()

    # Ctrl+F: find, every match highlighted, Enter moves, Esc closes
    _press(qtbot, window, "Ctrl+F")
    assert window.find_bar.isVisible() and window.find_bar.edit.hasFocus()
    qtbot.keyClicks(window.find_bar.edit, "invoice")
    window.find_bar.search()
    assert window.find_bar.count.text() == "3 of 3"  # the question once, the answer twice
    answer = window.chat.widget_of(window.chat.messages[-1])
    assert isinstance(answer, MessageWidget)
    assert sum(len(v.extraSelections()) for v in answer.body.views) == 2
    _press(qtbot, window.find_bar.edit, "Return")
    assert window.find_bar.count.text() == "1 of 3"
    _press(qtbot, window.find_bar.edit, "Shift+Return")
    assert window.find_bar.count.text() == "3 of 3"
    _press(qtbot, window, "F3")
    assert window.find_bar.count.text() == "1 of 3"
    _press(qtbot, window.find_bar.edit, "Escape")
    assert not window.find_bar.isVisible()
    assert sum(len(v.extraSelections()) for v in answer.body.views) == 0

    # Esc stops an answer being written
    await c.send("write more")
    await until(lambda: fake_openai.hanging.is_set(), what="streaming")
    _press(qtbot, window, "Escape")
    await until(lambda: not window.composer.busy, what="stopped by Esc")
    assert "Stopped." in [str(n.message) for n in window.chat.notices()]

    # Ctrl+N: a new chat; Ctrl+K then typing and Enter: back to the first one
    _press(qtbot, window, "Ctrl+N")
    await until(lambda: c.session_id != first, what="new chat")
    await c.idle()
    _press(qtbot, window, "Ctrl+K")
    assert window.sidebar.search.hasFocus()
    qtbot.keyClicks(window.sidebar.search, "invoice")
    _press(qtbot, window.sidebar.search, "Return")
    await until(lambda: c.session_id == first, what="jumped to the chat")

    # F2 renames, Delete asks before deleting
    window.sidebar.list.setFocus()
    _press(qtbot, window.sidebar.list, "F2")
    assert window.sidebar.list.state() == QAbstractItemView.State.EditingState
    _press(qtbot, window.sidebar.list.viewport().focusWidget() or window.sidebar.list, "Escape")
    window.sidebar.list.setFocus()
    _press(qtbot, window.sidebar.list, "Delete")
    boxes = [b for b in window.sidebar.findChildren(QMessageBox) if b.isVisible()]
    assert len(boxes) == 1 and "sum the invoice" in boxes[0].text()
    boxes[0].button(QMessageBox.StandardButton.No).click()


async def test_window_shortcuts(make_window: Any, fake_openai: FakeOpenAI, qtbot: Any) -> None:
    window = await _window(make_window, fake_openai)
    # Ctrl+, opens Settings (on Linux too, where Qt has no Preferences key)
    _press(qtbot, window, "Ctrl+,")
    assert window.settings_dialog is not None and window.settings_dialog.isVisible()
    window.settings_dialog.reject()
    # Ctrl+B and Ctrl+J fold and unfold the chat list and the tool panel
    assert window.sidebar.isVisible() and window.tool_panel.isVisible()
    _press(qtbot, window, "Ctrl+B")
    assert not window.sidebar.isVisible() and not window.sidebar_action.isChecked()
    _press(qtbot, window, "Ctrl+B")
    assert window.sidebar.isVisible()
    _press(qtbot, window, "Ctrl+J")
    assert not window.tool_panel.isVisible()
    _press(qtbot, window, "Ctrl+J")
    assert window.tool_panel.isVisible()
    # Ctrl+/ lists every shortcut in the UI language
    _press(qtbot, window, "Ctrl+/")
    dialog = window.shortcuts_dialog
    assert dialog.isVisible()
    rows = dict((does, keys) for keys, does in dialog.rows())
    assert len(rows) == len(shortcuts.ACTIONS) + len(shortcuts.ELSEWHERE)
    assert rows["Open Settings"] == QKeySequence("Ctrl+,").toString(QKeySequence.SequenceFormat.NativeText)
    dialog.reject()


async def test_opening_a_call_in_the_calls_tab_shows_its_card(
    make_window: Any, fake_openai: FakeOpenAI, qtbot: Any
) -> None:
    from fakeopenai import call, tool_reply

    fake_openai.push(tool_reply(call("echo_say", {"text": "hi"})), text_reply("said hi"))
    window = await _window(make_window, fake_openai)
    await window.controller.send("say hi")
    await until(lambda: not window.composer.busy)
    first = window.controller.session_id
    call_id = next(iter(window.chat.calls))
    await window.controller.new_session()
    window.tool_panel.tabs.setCurrentWidget(window.tool_panel.calls)  # loads the calls from the audit
    await until(lambda: window.tool_panel.calls.topLevelItemCount() == 1, what="the Calls tab filled")
    await asyncio.sleep(0.05)
    item = window.tool_panel.calls.topLevelItem(0)
    assert item is not None
    # a double-click is an activation of the row (Qt emits itemActivated for it); so is Enter
    calls = window.tool_panel.calls
    calls.setCurrentItem(item)
    calls.setFocus()
    qtbot.keyClick(calls, Qt.Key.Key_Return)
    await until(lambda: window.controller.session_id == first and call_id in window.chat.calls, what="its chat")
    await until(lambda: window.chat.widget_of(window.chat.calls[call_id]) is not None, what="its card shown")
