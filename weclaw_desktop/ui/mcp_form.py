"""The MCP page's editor form: the server entries being edited, and one of them shown in the form's widgets
(:meth:`McpServerForm._show_entry`) and read back from them (:meth:`McpServerForm._store_form`).

:class:`McpServerForm` is the base class of :class:`~weclaw_desktop.ui.mcp_page.McpPage`, which adds the
server list, load/apply, the live status, Test, Import/Export. The widgets are made by
``ui/mcp_layout.build(page)``.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QWidget,
)

from weclaw_desktop.i18n import Text, tr
from weclaw_desktop.mcp.config import SecretKind, secret_key
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import InvalidMcpServer, McpServerSettings
from weclaw_desktop.ui.mcp_secrets import pairs
from weclaw_desktop.ui.mcp_tools_table import McpToolsTable


@dataclass
class ServerEntry:
    """One server as edited: its settings and the secret values typed for it (name -> value)."""

    settings: McpServerSettings
    original: McpServerSettings | None  # as in the applied settings; None for a new server
    secrets: dict[tuple[SecretKind, str], str] = field(default_factory=dict)  # (kind, name) -> typed value
    invalid: InvalidMcpServer | None = None  # an unusable entry, saved as written until it is edited

    @property
    def original_name(self) -> str | None:
        return self.original.name if self.original is not None else None


class McpServerForm(QWidget):
    """The editor half of the MCP page."""

    changed = Signal()

    # the widgets, made by ui/mcp_layout.build()
    server_list: QListWidget
    add_button: QPushButton
    remove_button: QPushButton
    import_button: QPushButton
    export_button: QPushButton
    name_edit: QLineEdit
    enabled_check: QCheckBox
    transport_combo: QComboBox
    command_edit: QLineEdit
    args_edit: QLineEdit
    cwd_edit: QLineEdit
    env_edit: QPlainTextEdit
    url_edit: QLineEdit
    headers_edit: QPlainTextEdit
    oauth_check: QCheckBox
    secrets_table: QTableWidget
    add_secret_button: QPushButton
    trusted_check: QCheckBox
    trusted_hint: QLabel
    keywords_edit: QLineEdit
    timeout_spin: QDoubleSpinBox
    tools_table: McpToolsTable
    tools_hint: QLabel
    tabs: QTabWidget
    test_button: QPushButton
    reconnect_button: QPushButton
    json_button: QPushButton
    status_label: QLabel
    editor: QWidget
    _form: QFormLayout

    def __init__(self, secrets: SecretStore | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.secrets = secrets or SecretStore()
        self._entries: list[ServerEntry] = []
        self._current = -1  # the entry in the form
        self._loading = False  # the form is being filled: its signals are not edits
        self._table_kind: SecretKind = "env"
        self._status: Text | str | None = None  # what the status line says (re-rendered on a language change)
        self._labels: dict[str, QLabel] = {}
        self._tools_for = -1  # the entry whose tools the Tools tab shows

    def _label(self, key: str) -> QLabel:
        label = QLabel()
        self._labels[key] = label
        return label

    def _set_status(self, text: Text | str | None) -> None:
        self._status = text
        self.status_label.setText("" if text is None else str(text))

    def _row_text(self, entry: ServerEntry) -> str:
        s = entry.settings
        if entry.invalid is not None:
            return "⚠ " + (s.name or tr("mcp.invalid.unnamed"))
        return self._list_text(s.name, s.enabled)

    @staticmethod
    def _list_text(name: str, enabled: bool) -> str:
        return name if enabled else tr("mcp.off", name=name)

    def _show_status(self) -> None:
        """The live state of the server shown (the page's: it knows the manager and the test)."""

    # --- form <-> entry -------------------------------------------------------------------------
    def _show_entry(self, row: int) -> None:
        self._current = row
        has = 0 <= row < len(self._entries)
        self.editor.setEnabled(has)
        self.remove_button.setEnabled(has)
        if row != self._tools_for:  # another server: its tools are not known until tested or connected
            self.tools_table.show_tools([], [], {})
            self._tools_for = -1
        self._set_status(None)
        if not has:
            return
        entry = self._entries[row]
        s = entry.settings
        self._loading = True
        try:
            self.name_edit.setText(s.name)
            self.enabled_check.setChecked(s.enabled)
            self.transport_combo.setCurrentIndex(max(0, self.transport_combo.findData(s.transport)))
            self.command_edit.setText(s.command)
            self.args_edit.setText(shlex.join(s.args))
            self.cwd_edit.setText(s.cwd)
            self.oauth_check.setChecked(s.auth == "oauth")
            self.env_edit.setPlainText("\n".join(f"{k}={v}" for k, v in s.env.items()))
            self.url_edit.setText(s.url)
            self.headers_edit.setPlainText("\n".join(f"{k}: {v}" for k, v in s.headers.items()))
            self.secrets_table.setRowCount(0)
            kind: SecretKind = "env" if s.transport == "stdio" else "header"
            self._table_kind = kind
            for name in s.secret_env if s.transport == "stdio" else s.secret_headers:
                stored = entry.original_name is not None and self.secrets.has(
                    secret_key(entry.original_name, kind, name)
                )
                self._add_secret_row(name, stored, entry.secrets.get((kind, name), ""))
            self.trusted_check.setChecked(s.trusted)
            self.keywords_edit.setText(", ".join(s.keywords))
            self.timeout_spin.setValue(s.timeout_s)
        finally:
            self._loading = False
        self._update_visibility()
        self._show_status()

    def _add_secret_row(self, name: str, stored: bool, typed: str = "") -> None:
        row = self.secrets_table.rowCount()
        self.secrets_table.insertRow(row)
        self.secrets_table.setItem(row, 0, QTableWidgetItem(name))
        value = QLineEdit()
        value.setEchoMode(QLineEdit.EchoMode.Password)
        key = "mcp.secret.stored" if stored else "mcp.secret.placeholder"
        value.setProperty("placeholder_key", key)
        value.setPlaceholderText(tr(key))
        value.setText(typed)
        value.textEdited.connect(self._edited)
        self.secrets_table.setCellWidget(row, 1, value)

    def _secret_rows(self) -> list[tuple[str, str]]:
        rows = []
        for row in range(self.secrets_table.rowCount()):
            item = self.secrets_table.item(row, 0)
            name = item.text().strip() if item is not None else ""
            widget = self.secrets_table.cellWidget(row, 1)
            value = widget.text() if isinstance(widget, QLineEdit) else ""
            if name:
                rows.append((name, value))
        return rows

    def _store_form(self) -> None:
        row = self._current
        if self._loading or not 0 <= row < len(self._entries):
            return
        entry = self._entries[row]
        transport = str(self.transport_combo.currentData())
        secrets = self._secret_rows()
        try:
            args = shlex.split(self.args_edit.text())
        except ValueError:  # an open quote: keep the words as typed
            args = self.args_edit.text().split()
        values = {
            "name": self.name_edit.text().strip(),
            "enabled": self.enabled_check.isChecked(),
            "transport": transport,
            "command": self.command_edit.text().strip(),
            "args": args,
            "env": pairs(self.env_edit.toPlainText(), "="),
            "url": self.url_edit.text().strip(),
            "headers": pairs(self.headers_edit.toPlainText(), ":"),
            # The table holds the secrets of the transport it was filled for (it may just have changed).
            "secret_env": [n for n, _ in secrets] if self._table_kind == "env" else entry.settings.secret_env,
            "secret_headers": [n for n, _ in secrets]
            if self._table_kind == "header"
            else entry.settings.secret_headers,
            "trusted": self.trusted_check.isChecked(),
            "keywords": [k.strip() for k in self.keywords_edit.text().replace("，", ",").split(",") if k.strip()],
            "timeout_s": self.timeout_spin.value(),
            "cwd": self.cwd_edit.text().strip(),
            "auth": "oauth" if self.oauth_check.isChecked() and transport != "stdio" else "none",
            "tool_approval": self.tools_table.modes() if self._tools_for == row else dict(entry.settings.tool_approval),
        }
        # model_construct: an invalid name is kept as typed and reported by problems(), not lost.
        entry.settings = McpServerSettings.model_construct(**values)  # type: ignore[arg-type]
        kept = {key: v for key, v in entry.secrets.items() if key[0] != self._table_kind}
        entry.secrets = kept | {(self._table_kind, n): v for n, v in secrets if v}
        item = self.server_list.item(row)
        if item is not None:
            item.setText(self._row_text(entry))

    def _edited(self, *_: object) -> None:
        if not self._loading:
            self._touch()
            self._store_form()
            self.changed.emit()

    def _touch(self) -> None:
        """The user edits the selected entry: an unusable one becomes an ordinary entry from now on."""
        if 0 <= self._current < len(self._entries):
            entry = self._entries[self._current]
            if entry.invalid is not None:
                entry.invalid = None
                item = self.server_list.item(self._current)
                if item is not None:
                    item.setToolTip("")

    def _transport_changed(self, *_: object) -> None:
        self._update_visibility()
        if not self._loading and 0 <= self._current < len(self._entries):
            self._touch()
            self._store_form()
            self._show_entry(self._current)  # the secrets table shows the env or header secrets
            self.changed.emit()

    def _update_visibility(self) -> None:
        stdio = self.transport_combo.currentData() == "stdio"
        for widget in (self.command_edit, self.args_edit, self.cwd_edit, self.env_edit):
            widget.setVisible(stdio)
            self._form.labelForField(widget).setVisible(stdio)
        for widget in (self.url_edit, self.headers_edit):
            widget.setVisible(not stdio)
            self._form.labelForField(widget).setVisible(not stdio)
        self.oauth_check.setVisible(not stdio)
