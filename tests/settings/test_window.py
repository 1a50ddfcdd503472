"""The real window (offscreen) on a real settings.json: the notice shows what could not be read and what
became stricter, its buttons work, the tool panel's switch reaches the dispatcher through the store, and
a tool locked by an unreadable deny list is shown off with the reason and can be switched back on."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from fakeopenai import FakeOpenAI
from PySide6.QtCore import Qt
from settings_support import TEST_KEY, read_json, user_file, write_settings, write_tools
from uihelpers import close_windows, keep_loop

from weclaw_desktop.settings import SettingsStore

Factory = Callable[..., Awaitable[Any]]


@pytest.fixture
async def window_on(qtbot: Any, tmp_path: Path) -> AsyncIterator[Factory]:
    from weclaw_desktop.app import create_runtime
    from weclaw_desktop.i18n import set_language
    from weclaw_desktop.ui.boot import build_window
    from weclaw_desktop.ui.theme import apply_theme

    made: list[Any] = []
    tools = write_tools(tmp_path)
    keep_loop()

    async def factory(store: SettingsStore, *, language: str = "en") -> Any:
        from PySide6.QtWidgets import QApplication

        set_language(language)
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        app.setQuitOnLastWindowClosed(False)
        apply_theme(app, "light")
        window = build_window(store, tools_json=tools)
        made.append(window)
        create_runtime(window, api_key=TEST_KEY, logs=False)
        await window.controller.idle()
        window.show()
        return window

    yield factory
    await close_windows(made)
    set_language("en")


async def test_the_notice_names_the_field_the_effect_and_the_copy(fake_openai: FakeOpenAI, window_on: Factory) -> None:
    write_settings(user_file(fake_openai.base_url, agent__max_rounds="ten", tools__allowed_roots="/srv"))
    store = SettingsStore.open()
    window = await window_on(store)
    notice = window.settings_notice
    assert notice.isVisible()
    text = notice.body.text()
    assert "agent.max_rounds" in text and "tools.allowed_roots" in text
    assert "file tools can reach only the outputs folder" in text  # what became stricter, said plainly
    assert str(store.broken_copy) in text
    assert window.runtime is not None and window.runtime.loop.options.max_rounds == 12

    notice.accept_button.click()  # "Use these values": the store writes them, the notice goes
    assert not notice.isVisible()
    assert store.flush() is None  # the window's store writes off the UI thread
    assert read_json()["agent"]["max_rounds"] == 12


async def test_reload_after_a_fix_by_hand(fake_openai: FakeOpenAI, window_on: Factory) -> None:
    write_settings(user_file(fake_openai.base_url, agent__max_rounds="ten"))
    window = await window_on(SettingsStore.open())
    assert window.settings_notice.isVisible()
    write_settings(user_file(fake_openai.base_url, agent__max_rounds=40))
    window.settings_notice.reload_button.click()
    assert not window.settings_notice.isVisible()
    assert window.runtime.loop.options.max_rounds == 40  # the runtime followed the reload


async def test_hide_lasts_until_the_problems_change(fake_openai: FakeOpenAI, window_on: Factory) -> None:
    write_settings(user_file(fake_openai.base_url, agent__max_rounds="ten", ui__theme="purple"))
    window = await window_on(SettingsStore.open())
    window.settings_notice.hide_button.click()
    assert not window.settings_notice.isVisible()
    window.switch_tool("echo", False)  # an unrelated save: still hidden
    assert not window.settings_notice.isVisible()


async def test_no_notice_for_a_clean_file_or_unknown_keys(fake_openai: FakeOpenAI, window_on: Factory) -> None:
    write_settings({**user_file(fake_openai.base_url), "from_a_newer_version": True})
    window = await window_on(SettingsStore.open())
    assert not window.settings_notice.isVisible()


async def test_the_notice_in_chinese(fake_openai: FakeOpenAI, window_on: Factory) -> None:
    write_settings(user_file(fake_openai.base_url, tools__policy={"deny": 5}))
    window = await window_on(SettingsStore.open(), language="zh")
    assert window.settings_notice.title.text() == "部分设置无法读取"
    assert "含中高风险操作的工具已关闭" in window.settings_notice.body.text()
    assert window.settings_notice.accept_button.text() == "使用当前值"


async def test_the_tool_switch_reaches_the_dispatcher_through_the_store(
    fake_openai: FakeOpenAI, window_on: Factory
) -> None:
    """Clicking the box saves through the store; the runtime's dispatcher follows the store's notice (with
    the runtime unsubscribed, the same click changes the file but not the dispatcher: there is no side path)."""
    write_settings(user_file(fake_openai.base_url))
    store = SettingsStore.open()
    window = await window_on(store)
    rt = window.runtime
    item = window.tool_panel.item_for("echo")
    item.setCheckState(0, Qt.CheckState.Unchecked)
    assert store.flush() is None
    assert read_json()["tools"]["policy"]["disabled"] == ["echo", "shouty"]
    assert rt.dispatcher.policy.disabled == ["echo", "shouty"]
    assert window.board.state("echo") == "off"

    rt._unsubscribe()  # prove the path: without the subscription nothing else updates the dispatcher
    item.setCheckState(0, Qt.CheckState.Checked)
    assert store.flush() is None
    assert read_json()["tools"]["policy"]["disabled"] == ["shouty"]
    assert rt.dispatcher.policy.disabled == ["echo", "shouty"]


async def test_a_locked_tool_shows_why_and_its_switch_unlocks_it(fake_openai: FakeOpenAI, window_on: Factory) -> None:
    write_settings(user_file(fake_openai.base_url, tools__policy={"deny": "faulty"}))
    window = await window_on(SettingsStore.open())
    assert window.board.state("faulty") == "off" and window.board.state("echo") == "available"
    assert "could not be read" in window.tool_panel.tooltip_for("faulty")
    item = window.tool_panel.item_for("faulty")
    assert item.checkState(0) == Qt.CheckState.Unchecked
    item.setCheckState(0, Qt.CheckState.Checked)
    assert window.board.state("faulty") == "available"
    assert window.runtime.dispatcher.policy.enabled == ["faulty"]
    assert window.store.flush() is None
    assert read_json()["tools"]["policy"]["deny"] == "faulty"  # the user's text stays for them to fix


async def test_window_geometry_is_saved_through_the_store_and_keeps_the_bad_field(
    fake_openai: FakeOpenAI, window_on: Factory
) -> None:
    write_settings(user_file(fake_openai.base_url, agent__max_rounds="ten"))
    window = await window_on(SettingsStore.open())
    window.resize(1000, 700)
    window.quit_app()
    assert window.store.flush() is None  # what the app does when it quits
    doc = read_json()
    assert doc["ui"]["window_geometry"] and doc["agent"]["max_rounds"] == "ten"
