"""The tool panel's rows for an MCP server's tools, as real widgets offscreen against a real server.

What must hold: each server tool has a row with a switch and an approval mode under its server; a change
is saved through the SettingsStore as the server's ``tool_approval`` (the same setting as the MCP page),
and once the manager applies it, a tool switched off is no longer a function the model can be offered
and its row shows it off; "Ask first" and back to "Automatic" are saved the same way; both languages.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from polling import reached
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidgetItem

from weclaw_desktop.i18n import set_language
from weclaw_desktop.mcp import McpManager, ServerState
from weclaw_desktop.settings import McpServerSettings, Settings, SettingsStore
from weclaw_desktop.toolkit.policy import Policy
from weclaw_desktop.toolkit.registry import ToolRegistry
from weclaw_desktop.ui.tool_board import ToolBoard
from weclaw_desktop.ui.tool_panel import ToolPanel
from weclaw_desktop.ui.tool_panel_mcp import mode_saver


def _rows(panel: ToolPanel) -> dict[str, QTreeWidgetItem]:
    item = panel.item_for("mcp_test")
    return {item.child(i).text(0): item.child(i) for i in range(item.childCount())}


async def test_server_tools_have_switches_and_modes_saved_through_the_store(
    qtbot: Any, manager: McpManager, registry: ToolRegistry, stdio_settings: Callable[..., McpServerSettings]
) -> None:
    store = SettingsStore.open()
    store.save(Settings(mcp_servers=[stdio_settings()]))
    # what the app services do: a settings change is applied to the MCP manager
    pending: list[Any] = []
    store.subscribe(lambda change: pending.append(manager.apply(change.settings.mcp_servers)))
    manager.start(store.settings.mcp_servers[0])
    conn = manager.connection("test")
    assert await reached(lambda: conn is not None and conn.state is ServerState.CONNECTED, within=30)
    board = ToolBoard(registry, policy=Policy)
    stop_listening = registry.add_listener(board.refresh)
    notices: list[str] = []
    panel = ToolPanel(board, on_switch=lambda *_: None)
    panel.mcp_rows.on_mode = mode_saver(store, lambda text, _kind: notices.append(str(text)), board.refresh)
    qtbot.addWidget(panel)
    try:
        await _drive(panel, store, registry, pending, notices)
    finally:
        stop_listening()


async def _drive(
    panel: ToolPanel, store: SettingsStore, registry: ToolRegistry, pending: list[Any], notices: list[str]
) -> None:
    panel.rebuild()

    rows = _rows(panel)
    assert {"add", "env_digest", "place_order"} <= set(rows)
    assert rows["add"].checkState(0) == Qt.CheckState.Checked
    combo = panel.mcp_rows.combo(rows["place_order"])
    assert combo is not None and combo.currentData() == "" and combo.currentText() == "Automatic"

    rows["add"].setCheckState(0, Qt.CheckState.Unchecked)  # switch add off
    combo.setCurrentIndex(combo.findData("ask"))  # place_order: ask first
    assert store.settings.mcp_servers[0].tool_approval == {"add": "deny", "place_order": "ask"}
    for job in pending:
        await job
    pending.clear()
    assert await reached(lambda: "mcp_test_add" not in registry.functions_of("mcp_test"), within=20)
    assert await reached(lambda: "mcp_test_env_digest" in registry.functions_of("mcp_test"), within=20)
    panel.flush()
    rows = _rows(panel)
    assert rows["add"].checkState(0) == Qt.CheckState.Unchecked
    again = panel.mcp_rows.combo(rows["place_order"])
    assert again is not None and again.currentData() == "ask"
    assert not panel.mcp_rows.combo(rows["add"]).isEnabled()  # type: ignore[union-attr]

    again.setCurrentIndex(again.findData(""))  # back to automatic: the entry is removed, not "auto"
    rows["add"].setCheckState(0, Qt.CheckState.Checked)
    assert store.settings.mcp_servers[0].tool_approval == {}
    for job in pending:
        await job
    assert await reached(lambda: "mcp_test_add" in registry.functions_of("mcp_test"), within=20)
    assert notices == []

    set_language("zh")
    try:
        panel.retranslate()
        combo = panel.mcp_rows.combo(_rows(panel)["place_order"])
        assert combo is not None and combo.currentText() == "自动"
    finally:
        set_language("en")
