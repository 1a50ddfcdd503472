"""Edit one MCP server's settings as JSON (the MCP page's "Edit as JSON").

The text is the entry as settings.json stores it (secret *names*, never their values). OK validates it
as a whole (the same model the settings store uses) and shows every problem with its field; nothing
changes until it is valid. A pasted ``{"mcpServers": {...}}`` entry or a bare ``{"command": ...}``
object of another client is understood too (through the importer), so a snippet from a README works.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from weclaw_desktop.i18n import tr
from weclaw_desktop.mcp.importer import ConfigImportError, ImportedServer, parse_config
from weclaw_desktop.settings import McpServerSettings
from weclaw_desktop.toolkit.manifest import format_validation_error

_FIELDS = set(McpServerSettings.model_fields)


def entry_json(settings: McpServerSettings) -> str:
    return json.dumps(settings.model_dump(mode="json"), ensure_ascii=False, indent=2)


def parse_entry(text: str, name: str) -> tuple[McpServerSettings | None, ImportedServer | None, list[str]]:
    """(settings, imported, problems): our own form, or another client's entry (then ``imported`` holds
    its values, secrets included)."""
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, None, [f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"]
    if isinstance(data, dict) and data and set(data) <= _FIELDS and "name" in data:
        try:
            return McpServerSettings.model_validate(data), None, []
        except ValidationError as exc:
            return None, None, format_validation_error(exc)
    wrapped = (
        data if isinstance(data, dict) and ("mcpServers" in data or "servers" in data) else {"mcpServers": {name: data}}
    )
    try:
        plan = parse_config(json.dumps(wrapped))
    except ConfigImportError as exc:
        return None, None, [str(exc)]
    if len(plan.servers) != 1:
        return None, None, plan.problems or [tr("mcp.json.one")]
    return plan.servers[0].settings, plan.servers[0], []


class McpJsonDialog(QDialog):
    def __init__(self, settings: McpServerSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.original = settings
        self.result_settings: McpServerSettings | None = None
        self.imported: ImportedServer | None = None
        self.resize(560, 480)
        layout = QVBoxLayout(self)
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        layout.addWidget(self.hint)
        self.edit = QPlainTextEdit(entry_json(settings))
        layout.addWidget(self.edit, 1)
        self.problems = QLabel()
        self.problems.setObjectName("Error")
        self.problems.setWordWrap(True)
        self.problems.setVisible(False)
        layout.addWidget(self.problems)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.check_and_accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.retranslate()

    def check_and_accept(self) -> None:
        settings, imported, problems = parse_entry(self.edit.toPlainText(), self.original.name)
        if settings is None:
            self.problems.setText("\n".join(problems))
            self.problems.setVisible(True)
            return
        self.result_settings, self.imported = settings, imported
        self.accept()

    def retranslate(self) -> None:
        self.setWindowTitle(tr("mcp.json.title", name=self.original.name))
        self.hint.setText(tr("mcp.json.hint"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)
