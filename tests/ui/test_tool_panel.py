"""The tool panel: states with diagnostics, injection, the per-tool switch, the filter, the Calls tab."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fakeopenai import FakeOpenAI, call, text_reply, tool_reply
from PySide6.QtCore import Qt
from uihelpers import configured_settings, ui_manifest, until

from weclaw_desktop.i18n import set_language
from weclaw_desktop.settings import Settings, SettingsStore
from weclaw_desktop.toolkit.registry import ToolRegistry
from weclaw_desktop.ui.main_window import MainWindow


def _window(qtbot: Any, tools_json: Path, settings: Settings | None = None) -> MainWindow:
    set_language("en")
    settings = settings or Settings()
    registry = ToolRegistry.from_path(tools_json)
    window = MainWindow(settings, registry)
    qtbot.addWidget(window)
    return window


def test_bridged_tool_is_hidden_before_injection_and_available_after(qtbot: Any, tools_json: Path) -> None:
    window = _window(qtbot, tools_json)
    assert window.board.state("bridged") == "hidden"
    assert window.tool_panel.status_text("bridged") == "Unavailable"
    tip = window.tool_panel.tooltip_for("bridged")
    assert "[bridge-missing]" in tip and "clipboard" in tip
    assert "What to do:" in tip
    window.registry.inject(window.bridges)  # what the composition root does after building the window
    assert window.board.state("bridged") == "available"
    assert window.tool_panel.status_text("bridged") == "Available"
    assert "bridge-missing" not in window.tool_panel.tooltip_for("bridged")
    assert window.tool_panel.item_for("bridged").toolTip(0) == window.tool_panel.tooltip_for("bridged")
    window.quit_app()


def test_hidden_tool_tooltip_names_its_reason_in_both_languages(qtbot: Any, tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.delenv("WECLAW_UI_TEST_TOKEN", raising=False)
    data = ui_manifest()
    data["tools"]["echo"]["requires"] = {"env": "WECLAW_UI_TEST_TOKEN"}
    path = tmp_path / "tools-env.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    window = _window(qtbot, path)
    assert window.board.state("echo") == "hidden"
    tip = window.tool_panel.tooltip_for("echo")
    assert "Why: environment variable WECLAW_UI_TEST_TOKEN is not set [env-missing]" in tip
    assert "What to do: Set WECLAW_UI_TEST_TOKEN before starting WeClaw." in tip
    set_language("zh")
    try:
        tip_zh = window.tool_panel.tooltip_for("echo")
        assert "原因：未设置环境变量 WECLAW_UI_TEST_TOKEN [env-missing]" in tip_zh  # the specifics, translated
        assert "解决办法：请在启动 WeClaw 之前设置 WECLAW_UI_TEST_TOKEN。" in tip_zh
    finally:
        set_language("en")
    window.quit_app()


def test_filter_box_hides_tools_that_do_not_match(qtbot: Any, tools_json: Path) -> None:
    window = _window(qtbot, tools_json)
    window.tool_panel.filter.setText("work")
    assert not window.tool_panel.item_for("work").isHidden()
    assert window.tool_panel.item_for("echo").isHidden()
    assert window.tool_panel.item_for("echo").parent().isHidden()  # an empty category is hidden too
    window.tool_panel.filter.setText("回声")  # Chinese display names match as well
    assert not window.tool_panel.item_for("echo").isHidden()
    window.tool_panel.filter.clear()
    assert not any(window.tool_panel.item_for(t).isHidden() for t in ("echo", "work", "bridged"))
    window.quit_app()


async def test_switching_a_tool_off_is_saved_and_enforced(make_window: Any, fake_openai: FakeOpenAI) -> None:
    fake_openai.push(text_reply("ok"), text_reply("ok"))
    window = await make_window(configured_settings(fake_openai))
    item = window.tool_panel.item_for("work")
    assert item.checkState(0) == Qt.CheckState.Checked
    item.setCheckState(0, Qt.CheckState.Unchecked)  # what a click on the box does
    assert window.board.state("work") == "off"
    assert window.tool_panel.status_text("work") == "Switched off"
    assert "switched this tool off" in window.tool_panel.tooltip_for("work")
    assert window.store.flush() is None  # written off the UI thread
    assert SettingsStore.open().settings.tools.policy.disabled == ["work"]  # saved
    await window.controller.send("hi")
    await until(lambda: not window.composer.busy)
    assert not any(name.startswith("work_") for name in fake_openai.tool_names(-1))  # enforced
    assert "echo_say" in fake_openai.tool_names(-1)
    item.setCheckState(0, Qt.CheckState.Checked)
    assert window.store.flush() is None
    assert SettingsStore.open().settings.tools.policy.disabled == []
    await window.controller.send("again")
    await until(lambda: not window.composer.busy)
    assert "work_run" in fake_openai.tool_names(-1)


async def test_calls_tab_lists_recent_calls_from_the_audit(make_window: Any, fake_openai: FakeOpenAI) -> None:
    fake_openai.push(
        tool_reply(call("echo_say", {"text": "a"}), call("echo_say", {"times": 9})),
        text_reply("done"),
    )
    window = await make_window(configured_settings(fake_openai))
    await window.controller.send("two calls")
    await until(lambda: not window.composer.busy)
    panel = window.tool_panel
    await until(lambda: panel.counter.text().startswith("2 calls · 0 running"), what="batched panel update")
    panel.tabs.setCurrentWidget(panel.calls)
    await until(lambda: panel.calls.topLevelItemCount() == 2, what="calls listed")
    rows = [[panel.calls.topLevelItem(i).text(c) for c in range(4)] for i in range(2)]
    statuses = sorted(r[2].split(" · ")[0] for r in rows)
    assert statuses == ["Failed", "Succeeded"]
    failed = next(r for r in rows if r[2].startswith("Failed"))
    assert failed[1] == "echo_say" and "text" in failed[3]  # the validation error is shown
    assert failed[2].endswith(" ms")  # with its duration
