"""The MCP page's Import, Export and Edit as JSON (dialogs opened with ``open()``, never ``exec()``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QFileDialog

from weclaw_desktop.i18n import Text, tr
from weclaw_desktop.mcp.importer import ImportPlan, export_config
from weclaw_desktop.ui.mcp_import_dialog import McpImportDialog
from weclaw_desktop.ui.mcp_json_dialog import McpJsonDialog

#: The MCP page (``ui.mcp_page.McpPage``); not imported here, which would make an import cycle.
McpPage = Any


def open_import(page: McpPage) -> McpImportDialog:
    page._store_form()
    dialog = McpImportDialog(page.entry_names(), page)
    dialog.accepted.connect(lambda: add_imported(page, dialog.plan))
    dialog.open()
    return dialog


def add_imported(page: McpPage, plan: ImportPlan | None) -> None:
    if plan is None or not plan.servers:
        return
    for server in plan.servers:
        page.new_entry(server.settings, {(v.kind, v.name): v.value for v in server.values if v.secret and v.value})
    page._refresh_list()
    page.server_list.setCurrentRow(page.server_list.count() - 1)
    page._set_status(Text("mcp.import.added", n=len(plan.servers)))
    page.changed.emit()


def open_export(page: McpPage) -> QFileDialog:
    dialog = QFileDialog(page, tr("mcp.export"), str(Path.home() / "mcp.json"), "JSON (*.json)")
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    dialog.fileSelected.connect(lambda path: export_to(page, path))
    dialog.open()
    return dialog


def export_to(page: McpPage, path: str) -> None:
    servers = page.applied_servers()
    text = json.dumps(export_config(servers), ensure_ascii=False, indent=2) + "\n"
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        page._set_status(tr("mcp.export.failed", path=path, reason=exc.strerror or str(exc)))
        return
    page._set_status(Text("mcp.export.done", n=len(servers), path=path))


def open_json(page: McpPage) -> McpJsonDialog | None:
    page._store_form()
    settings = page.current_settings()
    if settings is None:
        return None
    dialog = McpJsonDialog(settings, page)
    dialog.accepted.connect(lambda: use_json(page, dialog))
    dialog.open()
    return dialog


def use_json(page: McpPage, dialog: McpJsonDialog) -> None:
    if dialog.result_settings is None:
        return
    imported = dialog.imported
    typed = {(v.kind, v.name): v.value for v in imported.values if v.secret and v.value} if imported else {}
    page.replace_current(dialog.result_settings, typed)
