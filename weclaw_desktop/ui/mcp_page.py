"""Settings > MCP: add, edit, test and remove MCP servers, and see their tools.

A page of the settings dialog: :meth:`McpPage.load` fills it from :class:`Settings`, :meth:`McpPage.apply`
writes the servers back (raising :class:`McpPageError` when a server is not valid, with nothing
changed) and puts secret values in the keyring. Secret values are typed into password fields, never
shown again and never written to the settings file; an empty field keeps the stored value.

"Test" starts the server as it is in the form (not yet applied), lists its tools and stops it; with a
manager attached (:meth:`McpPage.set_manager`) the page also shows the live state of running servers.
The Tools tab switches each server tool on or off and sets its approval mode (``tool_approval``);
Import adds servers from an ``mcpServers`` JSON (pasted or a file, secrets to the keyring on apply),
Export writes the applied servers without secret values, Edit as JSON edits the selected entry.
Layout: ``ui/mcp_layout.py``; the form <-> one entry: ``ui/mcp_form.py`` (the base class); secrets
bookkeeping: ``ui/mcp_secrets.py``.

An entry of settings.json that cannot be used (``Settings.mcp_invalid``) is a row marked ⚠ with its
error; it is saved back exactly as written until the user edits it (then it is an ordinary entry, checked
on apply) or removes it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pydantic import ValidationError
from PySide6.QtCore import QEvent, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QLineEdit,
    QListWidgetItem,
    QWidget,
)

from weclaw_desktop.i18n import Text, tr
from weclaw_desktop.mcp.config import SecretKind, secret_key
from weclaw_desktop.mcp.importer import ImportPlan
from weclaw_desktop.mcp.manager import McpManager
from weclaw_desktop.mcp.probe import ProbeResult, probe
from weclaw_desktop.mcp.tool import ServerToolInfo
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import InvalidMcpServer, McpServerSettings, Settings
from weclaw_desktop.settings.mcp_entries import draft
from weclaw_desktop.toolkit.manifest import format_validation_error
from weclaw_desktop.ui import mcp_page_io as page_io
from weclaw_desktop.ui.mcp_form import McpServerForm, ServerEntry
from weclaw_desktop.ui.mcp_import_dialog import McpImportDialog
from weclaw_desktop.ui.mcp_json_dialog import McpJsonDialog
from weclaw_desktop.ui.mcp_layout import TRANSPORTS, build
from weclaw_desktop.ui.mcp_secrets import TypedSecrets, drop_unlisted_secrets, forget_secrets, move_secrets


class McpPageError(ValueError):
    """The servers in the page cannot be saved; the message lists every problem."""


class McpPage(McpServerForm):
    """The MCP page of the settings dialog."""

    tested = Signal(bool, str)

    def __init__(self, secrets: SecretStore | None = None, parent: QWidget | None = None) -> None:
        super().__init__(secrets, parent)
        self.manager: McpManager | None = None
        self.test_task: asyncio.Task[ProbeResult] | None = None
        self._removed: list[ServerEntry] = []
        self._unlisten: Callable[[], None] | None = None
        self._build()
        self.retranslate()
        self._show_entry(-1)

    # --- layout (ui/mcp_layout.py) ----------------------------------------------------------------
    def _build(self) -> None:
        build(self)

    def retranslate(self) -> None:
        for key, label in self._labels.items():
            label.setText(tr(key))
        self.add_button.setText(tr("mcp.add"))
        self.remove_button.setText(tr("mcp.remove"))
        self.name_edit.setPlaceholderText(tr("mcp.name.placeholder"))
        self.enabled_check.setText(tr("mcp.enabled"))
        for index, value in enumerate(TRANSPORTS):
            self.transport_combo.setItemText(index, tr(f"mcp.transport.{value}"))
        self.import_button.setText(tr("mcp.import"))
        self.export_button.setText(tr("mcp.export"))
        self.json_button.setText(tr("mcp.json"))
        self.cwd_edit.setPlaceholderText(tr("mcp.cwd.placeholder"))
        self.oauth_check.setText(tr("mcp.oauth"))
        self.trusted_hint.setText(tr("mcp.trusted.hint"))
        self.tools_hint.setText(tr("mcp.tools.hint"))
        for index, key in enumerate(("mcp.tab.connection", "mcp.tab.behaviour", "mcp.tab.tools")):
            self.tabs.setTabText(index, tr(key))
        self.tools_table.retranslate()
        self.command_edit.setPlaceholderText(tr("mcp.command.placeholder"))
        self.env_edit.setPlaceholderText(tr("mcp.environment.placeholder"))
        self.headers_edit.setPlaceholderText(tr("mcp.headers.placeholder"))
        self.secrets_table.setHorizontalHeaderLabels([tr("mcp.secret.name"), tr("mcp.secret.value")])
        self.add_secret_button.setText(tr("mcp.secret.add"))
        self.trusted_check.setText(tr("mcp.trusted"))
        self.keywords_edit.setPlaceholderText(tr("mcp.keywords.placeholder"))
        self.timeout_spin.setSuffix(tr("mcp.timeout.suffix"))
        self.test_button.setText(tr("mcp.test"))
        self.reconnect_button.setText(tr("mcp.reconnect"))
        self.reconnect_button.setToolTip(tr("mcp.reconnect.tip"))
        for row in range(self.secrets_table.rowCount()):
            widget = self.secrets_table.cellWidget(row, 1)
            if isinstance(widget, QLineEdit):
                widget.setPlaceholderText(tr(str(widget.property("placeholder_key") or "mcp.secret.placeholder")))
        if not self._loading:
            self._refresh_list_texts()
        if self._status is not None:
            self.status_label.setText(str(self._status))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    # --- the dialog's interface -----------------------------------------------------------------
    def load(self, settings: Settings) -> None:
        self._entries = [ServerEntry(s.model_copy(deep=True), s.model_copy(deep=True)) for s in settings.mcp_servers]
        for bad in sorted(settings.mcp_invalid, key=lambda e: e.index):
            self._entries.insert(min(bad.index, len(self._entries)), ServerEntry(draft(bad.raw), None, invalid=bad))
        self._removed = []
        self._current = self._tools_for = -1
        self._refresh_list()
        self.server_list.setCurrentRow(0 if self._entries else -1)
        if not self._entries:
            self._show_entry(-1)

    def problems(self) -> list[str]:
        """What keeps the page from being applied (empty: it can be)."""
        self._store_form()
        problems: list[str] = []
        seen: set[str] = set()
        for entry in self._entries:
            if entry.invalid is not None:
                continue  # kept as written; not started, so it cannot clash with anything
            s = entry.settings
            label = s.name or tr("mcp.unnamed")
            if s.name in seen:
                problems.append(tr("mcp.problem", server=label, problem=tr("mcp.problem.duplicate")))
            seen.add(s.name)
            try:
                McpServerSettings.model_validate(s.model_dump())
            except ValidationError as exc:
                problems += [tr("mcp.problem", server=label, problem=p) for p in format_validation_error(exc)]
            if s.transport == "stdio" and not s.command.strip():
                problems.append(tr("mcp.problem", server=label, problem=tr("mcp.problem.no_command")))
            if s.transport == "http" and not s.url.startswith(("http://", "https://")):
                problems.append(tr("mcp.problem", server=label, problem=tr("mcp.problem.url")))
        return problems

    def apply(self, settings: Settings) -> None:
        """Write the servers into ``settings`` and their secrets into the keyring (all or nothing)."""
        problems = self.problems()
        if problems:
            self._set_status("\n".join(problems))
            raise McpPageError("; ".join(problems))
        for entry in self._removed:
            if entry.original is not None:
                forget_secrets(self.secrets, entry.original.name, entry.original)
        for entry in self._entries:
            if entry.invalid is not None:
                continue
            s = entry.settings
            if entry.original is not None:
                drop_unlisted_secrets(self.secrets, entry.original, s)
                if entry.original.name != s.name:
                    move_secrets(self.secrets, entry.original.name, s)
            for kind, names in (("env", s.secret_env), ("header", s.secret_headers)):
                for name in names:
                    value = entry.secrets.get((kind, name), "")  # type: ignore[arg-type]
                    if value:
                        self.secrets.set(secret_key(s.name, kind, name), value)  # type: ignore[arg-type]
            entry.secrets.clear()
            entry.original = s.model_copy(deep=True)
        self._removed = []
        settings.mcp_servers = [e.settings.model_copy(deep=True) for e in self._entries if e.invalid is None]
        settings.mcp_invalid = [
            InvalidMcpServer(raw=e.invalid.raw, errors=e.invalid.errors, index=i)
            for i, e in enumerate(self._entries)
            if e.invalid is not None
        ]
        self._show_entry(self._current)

    def set_manager(self, manager: McpManager | None) -> None:
        """Show the live state of running servers (the app's manager), updated as it changes."""
        if self._unlisten is not None:
            self._unlisten()
            self._unlisten = None
        self.manager = manager
        self.reconnect_button.setVisible(manager is not None)
        if manager is not None:
            self._unlisten = manager.registry.add_listener(self._show_status)
        self._show_status()

    def reconnect(self) -> None:
        """Restart the selected server now (the applied settings; apply first after editing)."""
        if self.manager is None or not 0 <= self._current < len(self._entries):
            return
        name = self._entries[self._current].original_name
        if name is not None:
            self.manager.restart(name)

    def servers(self) -> list[McpServerSettings]:
        """The servers as edited (not applied); unusable entries not edited yet are left out."""
        self._store_form()
        return [e.settings.model_copy(deep=True) for e in self._entries if e.invalid is None]

    def invalid_rows(self) -> list[tuple[int, str]]:
        """(row, error) of the unusable entries shown as they were written."""
        return [(i, e.invalid.error) for i, e in enumerate(self._entries) if e.invalid is not None]

    # --- list -----------------------------------------------------------------------------------
    def add_server(self) -> None:
        self._store_form()
        taken = {e.settings.name for e in self._entries}
        n = 1
        while f"server{n}" in taken:
            n += 1
        self._entries.append(ServerEntry(McpServerSettings(name=f"server{n}"), None))
        self._refresh_list()
        self.server_list.setCurrentRow(len(self._entries) - 1)
        self.name_edit.setFocus()
        self.name_edit.selectAll()
        self.changed.emit()

    def remove_server(self) -> None:
        row = self._current
        if not 0 <= row < len(self._entries):
            return
        self._removed.append(self._entries.pop(row))
        self._current = self._tools_for = -1
        self._refresh_list()
        self.server_list.setCurrentRow(min(row, len(self._entries) - 1))
        if not self._entries:
            self._show_entry(-1)
        self.changed.emit()

    def _refresh_list(self) -> None:
        self._loading = True
        try:
            self.server_list.clear()
            for entry in self._entries:
                item = QListWidgetItem(self._row_text(entry))
                s = entry.settings
                tip = s.command if s.transport == "stdio" else s.url
                if entry.invalid is not None:
                    tip = tr("mcp.invalid.row", error=entry.invalid.error)
                item.setToolTip(tip)
                self.server_list.addItem(item)
        finally:
            self._loading = False

    def _refresh_list_texts(self) -> None:
        for row, entry in enumerate(self._entries):
            item = self.server_list.item(row)
            if item is not None:
                item.setText(self._row_text(entry))

    def _select(self, row: int) -> None:
        if self._loading:
            return
        self._store_form()
        self._show_entry(row)

    # --- status and test ------------------------------------------------------------------------
    def _show_status(self) -> None:
        if 0 <= self._current < len(self._entries) and self._entries[self._current].invalid is not None:
            error = self._entries[self._current].invalid.error  # type: ignore[union-attr]
            self.status_label.setText("⚠ " + tr("mcp.invalid.status", error=error))
            return
        if self.manager is None or not 0 <= self._current < len(self._entries):
            return
        if self.test_task is not None and not self.test_task.done():
            return  # the test's outcome is what the user is waiting for
        entry = self._entries[self._current]
        if entry.original_name is None:
            return
        status = self.manager.status(entry.original_name)
        try:
            self._set_status(status.text or status.message)
            self._show_tools(status.catalogue, status.problems)
        except RuntimeError:  # the page was deleted without being closed
            if self._unlisten is not None:
                self._unlisten()
                self._unlisten = None

    def _show_tools(self, tools: list[ServerToolInfo], problems: list[str]) -> None:
        if not 0 <= self._current < len(self._entries):
            return
        modes = dict(self._entries[self._current].settings.tool_approval)
        self.tools_table.show_tools(tools, problems, modes)
        self._tools_for = self._current

    def tool_rows(self) -> list[str]:
        """What the Tools tab lists: each tool's function (its own name when not offered), then ⚠ problems."""
        return self.tools_table.rows()

    def start_test(self) -> asyncio.Task[ProbeResult] | None:
        """Start the server as in the form, list its tools, stop it. Returns the running task."""
        self._store_form()
        if not 0 <= self._current < len(self._entries):
            return None
        entry = self._entries[self._current]
        try:
            settings = McpServerSettings.model_validate(entry.settings.model_dump())
        except ValidationError as exc:
            self._set_status("; ".join(format_validation_error(exc)))
            return None
        kind: SecretKind = "env" if settings.transport == "stdio" else "header"
        typed = {secret_key(settings.name, k, n): v for (k, n), v in entry.secrets.items() if k == kind}
        if entry.original_name is not None and entry.original_name != settings.name:
            for name in settings.secret_env if kind == "env" else settings.secret_headers:
                old = self.secrets.get(secret_key(entry.original_name, kind, name))
                if old:
                    typed.setdefault(secret_key(settings.name, kind, name), old)
        store = TypedSecrets(self.secrets, typed)
        self.test_button.setEnabled(False)
        self._set_status(Text("mcp.testing", name=settings.name))
        self.tools_table.show_tools([], [], {})
        task = asyncio.ensure_future(probe(settings, store, connect_timeout_s=min(settings.timeout_s, 30.0)))
        task.add_done_callback(self._tested)
        self.test_task = task
        return task

    def _tested(self, task: asyncio.Task[ProbeResult]) -> None:
        self.test_button.setEnabled(True)
        if task.cancelled():
            self._set_status(Text("mcp.test.cancelled"))
            return
        exc = task.exception()
        result = task.result() if exc is None else ProbeResult(ok=False, message=f"{type(exc).__name__}: {exc}")
        self._set_status(result.text or result.message)
        self._show_tools(result.catalogue, result.problems)
        self.tested.emit(result.ok, result.message)
        if result.catalogue:
            self.tabs.setCurrentIndex(2)

    # --- import, export, JSON (ui/mcp_page_io.py) ----------------------------------------------
    def open_import(self) -> McpImportDialog:
        """Paste or open an mcpServers JSON; the servers become new entries (saved with the dialog)."""
        return page_io.open_import(self)

    def add_imported(self, plan: ImportPlan | None) -> None:
        page_io.add_imported(self, plan)

    def open_export(self) -> QFileDialog:
        """Save the servers as applied (not the unsaved edits) as mcpServers JSON, without secret values."""
        return page_io.open_export(self)

    def export_to(self, path: str) -> None:
        page_io.export_to(self, path)

    def open_json(self) -> McpJsonDialog | None:
        """Edit the selected entry as JSON (validated before it replaces the form)."""
        return page_io.open_json(self)

    def new_entry(self, settings: McpServerSettings, typed: dict[tuple[SecretKind, str], str]) -> None:
        """Add a server that is not saved yet (import), with secret values to store on apply."""
        self._entries.append(ServerEntry(settings.model_copy(deep=True), None, dict(typed)))

    def applied_servers(self) -> list[McpServerSettings]:
        return [e.original for e in self._entries if e.original is not None]

    def replace_current(self, settings: McpServerSettings, typed: dict[tuple[SecretKind, str], str]) -> None:
        if not 0 <= self._current < len(self._entries):
            return
        entry = self._entries[self._current]
        entry.invalid = None
        entry.settings = settings
        entry.secrets.update(typed)
        self._show_entry(self._current)
        self._refresh_list_texts()
        self.changed.emit()

    def entry_names(self) -> list[str]:
        return [e.settings.name for e in self._entries]

    def current_settings(self) -> McpServerSettings | None:
        return self._entries[self._current].settings if 0 <= self._current < len(self._entries) else None

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.test_task is not None and not self.test_task.done():
            self.test_task.cancel()
        self.set_manager(None)
        super().closeEvent(event)
