"""Sessions sidebar: new, list, rename, delete, search, reopen with history."""

from __future__ import annotations

from typing import Any

from fakeopenai import FakeOpenAI, text_reply
from PySide6.QtWidgets import QMessageBox
from uihelpers import configured_settings, until


async def test_new_rename_delete_search_and_reopen(make_window: Any, fake_openai: FakeOpenAI) -> None:
    fake_openai.push(text_reply("about invoices"), text_reply("about cats"))
    window = await make_window(configured_settings(fake_openai))
    c = window.controller
    await c.send("tell me about 发票 invoices")
    await until(lambda: not window.composer.busy)
    first = c.session_id
    await c.new_session()
    second = c.session_id
    assert second != first and window.chat.messages == []
    await c.send("and cats")
    await until(lambda: not window.composer.busy)
    await c.idle()
    assert set(window.sidebar.ids()) == {first, second}

    # rename in place (what the inline editor does)
    item = window.sidebar.list.item(window.sidebar.ids().index(first))
    item.setText("Invoices")
    await c.idle()
    assert "Invoices" in window.sidebar.titles()
    assert (await window.runtime.get_session(first)).title == "Invoices"

    # search (Chinese and English) narrows the list
    window.sidebar.search.setText("发票")
    await until(lambda: window.sidebar.ids() == [first], what="search result")
    window.sidebar.search.setText("")
    await until(lambda: len(window.sidebar.ids()) == 2)

    # reopen the first chat: its messages come back from history
    window.sidebar.list.setCurrentRow(window.sidebar.ids().index(first))
    await until(lambda: c.session_id == first and len(window.chat.messages) == 2)
    assert window.chat.message_widget(window.chat.messages[1]).plain_text().strip() == "about invoices"

    # delete asks first; No keeps it, Yes removes it
    box = window.sidebar.confirm_delete(first, "Invoices")
    box.button(QMessageBox.StandardButton.No).click()
    await c.idle()
    assert first in window.sidebar.ids()
    box = window.sidebar.confirm_delete(first, "Invoices")
    box.button(QMessageBox.StandardButton.Yes).click()
    await until(lambda: window.sidebar.ids() == [second], what="deleted")
    assert await window.runtime.get_session(first) is None
    assert c.session_id == ""
