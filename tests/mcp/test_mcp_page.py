"""The MCP settings page, a real widget offscreen: load, edit, apply (secrets to the keyring), test, remove."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from polling import reached
from PySide6.QtWidgets import QLineEdit

from weclaw_desktop.i18n import tr
from weclaw_desktop.mcp import secret_key
from weclaw_desktop.paths import app_paths
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import McpServerSettings, Settings, SettingsStore
from weclaw_desktop.ui.mcp_page import McpPage, McpPageError

SERVER = str(Path(__file__).resolve().parent / "mcp_test_server.py")  # a path, for the form


def _settings() -> Settings:
    return Settings(
        mcp_servers=[
            McpServerSettings(name="files", command="npx", args=["-y", "server fs", "~/Docs"], secret_env=["TOKEN"]),
            McpServerSettings(name="web", transport="http", url="https://example.com/mcp", trusted=True),
        ]
    )


def _secret_field(page: McpPage, row: int) -> QLineEdit:
    widget = page.secrets_table.cellWidget(row, 1)
    assert isinstance(widget, QLineEdit)
    return widget


def test_load_shows_servers_and_stored_secrets_without_their_values(qtbot: Any, memory_keyring: Any) -> None:
    SecretStore().set(secret_key("files", "env", "TOKEN"), "ghp-0123456789-secret")
    page = McpPage()
    qtbot.addWidget(page)
    page.load(_settings())
    assert [page.server_list.item(i).text() for i in range(page.server_list.count())] == ["files", "web"]
    assert page.name_edit.text() == "files"
    assert page.args_edit.text() == "-y 'server fs' '~/Docs'"
    assert page.secrets_table.item(0, 0).text() == "TOKEN"
    assert _secret_field(page, 0).text() == "" and _secret_field(page, 0).placeholderText() == tr("mcp.secret.stored")

    page.server_list.setCurrentRow(1)
    assert page.url_edit.text() == "https://example.com/mcp" and page.trusted_check.isChecked()
    assert page.url_edit.isVisibleTo(page) and not page.command_edit.isVisibleTo(page)

    # Switching a server to HTTP shows its header secrets; its env secret list is kept, not turned into headers.
    page.server_list.setCurrentRow(0)
    page.transport_combo.setCurrentIndex(1)
    assert page.secrets_table.rowCount() == 0 and page.url_edit.isVisibleTo(page)
    files = page.servers()[0]
    assert (files.transport, files.secret_env, files.secret_headers) == ("http", ["TOKEN"], [])


def test_add_apply_rename_and_remove_keep_secrets_in_the_keyring_only(qtbot: Any, memory_keyring: Any) -> None:
    settings = _settings()
    page = McpPage()
    qtbot.addWidget(page)
    page.load(settings)
    page.add_server()
    assert page.name_edit.text() == "server1"
    page.name_edit.setText("calc")
    page.name_edit.textEdited.emit("calc")
    page.command_edit.setText(sys.executable)
    page.args_edit.setText(SERVER)
    page.args_edit.textEdited.emit(SERVER)
    page.env_edit.setPlainText("MODE=fast\nbroken line")
    page.keywords_edit.setText("算术，calc")
    page.keywords_edit.textEdited.emit("")
    page.add_secret_button.click()
    page.secrets_table.item(0, 0).setText("API_TOKEN")
    _secret_field(page, 0).setText("calc-secret-98765")
    _secret_field(page, 0).textEdited.emit("calc-secret-98765")

    page.apply(settings)
    calc = settings.mcp_servers[2]
    assert (calc.name, calc.command, calc.args, calc.env) == ("calc", sys.executable, [SERVER], {"MODE": "fast"})
    assert calc.secret_env == ["API_TOKEN"] and calc.keywords == ["算术", "calc"]
    assert SecretStore().get(secret_key("calc", "env", "API_TOKEN")) == "calc-secret-98765"
    SettingsStore.open().save(settings)
    assert "calc-secret-98765" not in app_paths().settings_file.read_text(encoding="utf-8")
    assert _secret_field(page, 0).text() == "" and _secret_field(page, 0).placeholderText() == tr("mcp.secret.stored")

    # Rename: the secret moves with the server.
    page.name_edit.setText("calculator")
    page.name_edit.textEdited.emit("calculator")
    page.apply(settings)
    assert [s.name for s in settings.mcp_servers] == ["files", "web", "calculator"]
    assert SecretStore().get(secret_key("calculator", "env", "API_TOKEN")) == "calc-secret-98765"
    assert SecretStore().get(secret_key("calc", "env", "API_TOKEN")) is None

    # Remove: the server and its secrets go.
    page.remove_server()
    page.apply(settings)
    assert [s.name for s in settings.mcp_servers] == ["files", "web"]
    assert SecretStore().get(secret_key("calculator", "env", "API_TOKEN")) is None


def test_invalid_servers_are_refused_and_nothing_changes(qtbot: Any, memory_keyring: Any) -> None:
    settings = _settings()
    before = settings.model_dump()
    page = McpPage()
    qtbot.addWidget(page)
    page.load(settings)
    page.name_edit.setText("bad name!")
    page.name_edit.textEdited.emit("bad name!")
    page.server_list.setCurrentRow(1)
    page.url_edit.setText("example.com")
    page.url_edit.textEdited.emit("example.com")
    with pytest.raises(McpPageError) as err:
        page.apply(settings)
    assert "bad name!: name: String should match pattern" in str(err.value)
    assert "web: the URL must start with http:// or https://" in str(err.value)
    assert settings.model_dump() == before
    assert "web: the URL must start with http:// or https://" in page.status_label.text()


async def test_test_button_lists_the_tools_of_the_server_as_typed(
    qtbot: Any, memory_keyring: Any, tmp_path: Path, http_server: tuple[str, Path], http_key: str
) -> None:
    page = McpPage()
    qtbot.addWidget(page)
    page.load(Settings())
    assert not page.editor.isEnabled()
    page.add_server()
    page.transport_combo.setCurrentIndex(1)
    page.url_edit.setText(http_server[0])
    page.url_edit.textEdited.emit("")
    page.add_secret_button.click()
    page.secrets_table.item(0, 0).setText("X-Api-Key")
    _secret_field(page, 0).setText(http_key)  # typed, not applied: Test uses it anyway
    _secret_field(page, 0).textEdited.emit("")
    outcomes: list[tuple[bool, str]] = []
    page.tested.connect(lambda ok, message: outcomes.append((ok, message)))
    task = page.start_test()
    assert task is not None and not page.test_button.isEnabled()
    result = await asyncio.wait_for(task, 30)
    await asyncio.sleep(0)  # let the done-callback run
    assert result.ok, result.message
    items = page.tool_rows()
    assert items[:3] == ["mcp_server1_add", "mcp_server1_env_digest", "mcp_server1_fail_with_env"]
    assert items[-1].startswith("⚠ tool 'broken_schema' of MCP server 'server1' is skipped")
    assert page.status_label.text() == f"Connected to weclaw-test: {len(result.tools)} tools."
    assert outcomes == [(True, page.status_label.text())] and page.test_button.isEnabled()
    assert SecretStore().get(secret_key("server1", "header", "X-Api-Key")) is None  # nothing stored by a test

    page.transport_combo.setCurrentIndex(0)
    page.command_edit.setText(str(tmp_path / "missing-server"))
    page.command_edit.textEdited.emit("x")
    result = await asyncio.wait_for(page.start_test(), 30)  # type: ignore[arg-type]
    await asyncio.sleep(0)
    assert not result.ok
    assert page.status_label.text() == (
        f"'server1' failed: the command '{tmp_path / 'missing-server'}' was not found; check the path or install it"
    )
    assert json.dumps(outcomes[-1]) == json.dumps([False, page.status_label.text()])


async def test_live_status_of_running_servers_and_reconnect(
    qtbot: Any, manager: Any, http_settings: Any, registry: Any
) -> None:
    from weclaw_desktop.mcp import ServerState

    settings = Settings(mcp_servers=[http_settings()])
    await manager.apply(settings.mcp_servers)
    page = McpPage()
    qtbot.addWidget(page)
    page.load(settings)
    page.set_manager(manager)
    assert page.reconnect_button.isVisibleTo(page)
    conn = manager.tool("web").connection
    assert await conn.wait_for(ServerState.CONNECTED, within=20)
    await asyncio.sleep(0)
    assert page.status_label.text() == "MCP server 'web' is connected"
    assert page.tool_rows()[0] == "mcp_web_add"

    states: list[ServerState] = []
    registry.add_listener(lambda: states.append(conn.state))
    page.reconnect_button.click()  # restarts the connection: the page follows it back to connected
    await reached(lambda: states[-2:] == [ServerState.CONNECTING, ServerState.CONNECTED], within=20, interval=0.05)
    assert states[-2:] == [ServerState.CONNECTING, ServerState.CONNECTED]
    assert page.status_label.text() == "MCP server 'web' is connected"
    page.close()
    assert page._unlisten is None
