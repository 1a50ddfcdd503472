"""The MCP page's new parts, as real widgets offscreen: per-tool switches and approval modes saved as the
server's tool_approval, Import (paste, the secret boxes, secrets to the keyring only on apply), Edit as
JSON (validated, nothing changes while it is wrong), Export without secrets, both languages, and the page
fitting the settings dialog at its smallest size."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

from weclaw_desktop.i18n import set_language
from weclaw_desktop.mcp import secret_key
from weclaw_desktop.paths import app_paths
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import McpServerSettings, Settings, SettingsStore
from weclaw_desktop.ui.mcp_import_dialog import McpImportDialog
from weclaw_desktop.ui.mcp_page import McpPage

SDK = str(Path(__file__).resolve().parent / "sdk_server.py")


def _page(qtbot: Any, settings: Settings) -> McpPage:
    page = McpPage()
    qtbot.addWidget(page)
    page.load(settings)
    return page


async def test_tool_switches_and_modes_are_saved(qtbot: Any, memory_keyring: Any) -> None:
    settings = Settings(mcp_servers=[McpServerSettings(name="sdk", command=sys.executable, args=[SDK], trusted=True)])
    page = _page(qtbot, settings)
    result = await asyncio.wait_for(page.start_test(), 30)  # type: ignore[arg-type]
    await asyncio.sleep(0)
    assert result.ok, result.message
    assert page.tabs.currentIndex() == 2  # the Tools tab shows what the test found
    table = page.tools_table
    names = [table.item(r, 0).text() for r in range(table.rowCount())]
    reset, lookup = names.index("reset_repo"), names.index("lookup")
    assert table.item(reset, 1).text() == "high" and table.item(lookup, 1).text() == "low"
    table.item(lookup, 0).setCheckState(Qt.CheckState.Unchecked)  # switch lookup off
    combo = table.cellWidget(reset, 2)
    assert isinstance(combo, QComboBox)
    combo.setCurrentIndex(combo.findData("allow"))
    candidate = Settings(mcp_servers=list(settings.mcp_servers))
    page.apply(candidate)
    assert candidate.mcp_servers[0].tool_approval == {"lookup": "deny", "reset_repo": "allow"}
    assert (
        "⚠ tool 'long_job' of MCP server 'sdk' is skipped: it runs only as an MCP task, which WeClaw does not support yet"
        in page.tool_rows()
    )


def test_import_dialog_paste_preview_and_secrets_on_apply(qtbot: Any, memory_keyring: Any) -> None:
    page = _page(qtbot, Settings(mcp_servers=[McpServerSettings(name="github", command="npx")]))
    dialog = page.open_import()
    assert isinstance(dialog, McpImportDialog)
    dialog.text.setPlainText("{broken")
    assert dialog.status.text().startswith("⚠ not valid JSON") and not dialog.buttons.buttons()[0].isEnabled()
    doc = {
        "mcpServers": {"github": {"command": "npx", "env": {"GITHUB_TOKEN": "ghp_abcdefghijklmnop1234", "DEBUG": "1"}}}
    }
    dialog.text.setPlainText(json.dumps(doc))
    top = dialog.tree.topLevelItem(0)
    assert top.text(0) == "github-2"  # the page already has a github
    values = {top.child(i).text(0): top.child(i) for i in range(top.childCount()) if top.child(i).text(0)}
    assert values["env GITHUB_TOKEN"].checkState(1) == Qt.CheckState.Checked
    assert values["env DEBUG"].checkState(1) == Qt.CheckState.Unchecked
    values["env DEBUG"].setCheckState(1, Qt.CheckState.Checked)  # the user says DEBUG is a secret too
    dialog.accept()
    assert [page.server_list.item(i).text() for i in range(page.server_list.count())] == ["github", "github-2"]
    assert SecretStore().get(secret_key("github-2", "env", "GITHUB_TOKEN")) is None  # not before apply
    candidate = Settings()
    page.apply(candidate)
    added = candidate.mcp_servers[1]
    assert (added.env, sorted(added.secret_env)) == ({}, ["DEBUG", "GITHUB_TOKEN"])
    assert SecretStore().get(secret_key("github-2", "env", "GITHUB_TOKEN")) == "ghp_abcdefghijklmnop1234"
    assert SecretStore().get(secret_key("github-2", "env", "DEBUG")) == "1"


def test_edit_as_json_validates_before_it_changes_anything(qtbot: Any, memory_keyring: Any) -> None:
    page = _page(qtbot, Settings(mcp_servers=[McpServerSettings(name="files", command="npx", secret_env=["TOKEN"])]))
    dialog = page.open_json()
    assert dialog is not None and json.loads(dialog.edit.toPlainText())["secret_env"] == ["TOKEN"]
    dialog.edit.setPlainText(dialog.edit.toPlainText().replace('"stdio"', '"pigeon"'))
    dialog.check_and_accept()
    assert dialog.isVisible() and "transport" in dialog.problems.text()
    assert page.transport_combo.currentData() == "stdio"  # nothing changed
    data = json.loads(dialog.edit.toPlainText().replace('"pigeon"', '"http"'))
    data["url"], data["secret_headers"] = "https://files.example.com/mcp", ["Authorization"]
    dialog.edit.setPlainText(json.dumps(data))
    dialog.check_and_accept()
    assert page.transport_combo.currentData() == "http" and page.url_edit.text() == "https://files.example.com/mcp"
    # a snippet from another app's config works as well
    dialog = page.open_json()
    assert dialog is not None
    dialog.edit.setPlainText('{"command": "uvx", "args": ["mcp-server-time"], "env": {"API_KEY": "k-123"}}')
    dialog.check_and_accept()
    assert page.command_edit.text() == "uvx" and page.secrets_table.item(0, 0).text() == "API_KEY"


def test_export_writes_the_applied_servers_without_secrets(qtbot: Any, memory_keyring: Any, tmp_path: Path) -> None:
    SecretStore().set(secret_key("files", "env", "TOKEN"), "tok-never-exported")
    page = _page(qtbot, Settings(mcp_servers=[McpServerSettings(name="files", command="npx", secret_env=["TOKEN"])]))
    target = tmp_path / "mcp.json"
    page.export_to(str(target))
    text = target.read_text(encoding="utf-8")
    assert json.loads(text) == {"mcpServers": {"files": {"command": "npx", "args": []}}}
    assert "tok-never-exported" not in text and "Wrote 1 server(s)" in page.status_label.text()


def test_the_page_is_translated(qtbot: Any) -> None:
    page = _page(qtbot, Settings(mcp_servers=[McpServerSettings(name="files", command="npx")]))
    set_language("zh")
    page.retranslate()
    assert [page.tabs.tabText(i) for i in range(3)] == ["连接", "行为", "工具"]
    assert page.import_button.text() == "导入…" and page.json_button.text() == "以 JSON 编辑…"
    assert page.transport_combo.itemText(2) == "网址（旧版 HTTP+SSE）"
    assert page.tools_table.horizontalHeaderItem(2).text() == "审批"


async def test_the_page_fits_the_settings_dialog(qtbot: Any, memory_keyring: Any) -> None:
    """At the dialog's smallest size nothing of the page is cut off: the tabs scroll, the buttons show."""
    from weclaw_desktop.ui.settings_dialog import SettingsDialog

    store = SettingsStore(app_paths(), settings=Settings(mcp_servers=[McpServerSettings(name="files", command="npx")]))
    page = McpPage()
    dialog = SettingsDialog(store, SecretStore(), extra_pages=[("MCP", page)])
    qtbot.addWidget(dialog)
    dialog.resize(dialog.minimumSize())
    dialog.show()
    dialog.show_page(len(dialog.pages) - 1)
    await asyncio.sleep(0.05)
    for widget in (
        page.test_button,
        page.json_button,
        page.add_button,
        page.import_button,
        page.export_button,
        page.tabs,
    ):
        assert widget.isVisible()
        top_left = widget.mapTo(dialog, widget.rect().topLeft())
        bottom_right = widget.mapTo(dialog, widget.rect().bottomRight())
        assert dialog.rect().contains(top_left) and dialog.rect().contains(bottom_right), widget
        assert widget.width() >= min(widget.sizeHint().width(), widget.minimumSizeHint().width()), widget
    dialog.close()
