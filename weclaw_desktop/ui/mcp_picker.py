"""The composer's MCP picker: attach a resource of a connected MCP server to the message (its text becomes an
attachment chip like a file's; images it holds become image attachments), or fill the message with one of a
server's prompts (asking for its arguments first). Prompts are offered twice: under the paperclip's menu, and as
a "/" list — typing "/" (then a few letters) at the start of an empty message pops up the matching prompts; Enter or
a click picks one, Escape or a space closes the list.

The source is the app's :class:`~weclaw_desktop.mcp.McpManager` (``resources()``, ``prompts()``,
``connection(server)``), handed over by the composition root; without one the picker is not shown.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QCompleter,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QVBoxLayout,
    QWidget,
)

from weclaw_desktop.attachments import MAX_TEXT_CHARS, Attachment, AttachmentError, store_image_bytes
from weclaw_desktop.attachments.prepare import cap
from weclaw_desktop.i18n import tr
from weclaw_desktop.ui.tasks import TaskSet

log = logging.getLogger("weclaw.ui")
_SAVED = re.compile(r"^\[[^\]]* saved to [^\]]*\]$")
SLASH_ROLE = Qt.ItemDataRole.UserRole + 1  # the "/name" a row completes to
_SLASH = re.compile(r"/\S*")  # the whole message is "/" and a word being typed


class McpSource(Protocol):
    def resources(self) -> list[tuple[str, Any]]: ...

    def prompts(self) -> list[tuple[str, Any]]: ...

    def connection(self, server: str) -> Any: ...


class PromptDialog(QDialog):
    """The arguments of a server prompt; ``filled(dict)`` when the user accepts (required ones are needed)."""

    filled = Signal(dict)

    def __init__(self, title: str, fields: list[Any], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.edits: dict[str, QLineEdit] = {}
        self.required = {f.name for f in fields if f.required}
        for f in fields:
            edit = QLineEdit()
            edit.setPlaceholderText(f.description)
            self.edits[f.name] = edit
            form.addRow(QLabel(f.name + (" *" if f.required else "")), edit)
        layout.addLayout(form)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self._ok)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)

    def _ok(self) -> None:
        values = {name: e.text().strip() for name, e in self.edits.items() if e.text().strip()}
        if self.required - set(values):
            for name in self.required - set(values):
                self.edits[name].setFocus()
            return
        self.filled.emit(values)
        self.accept()


class McpPicker(QObject):
    """Fills ``menu`` with the servers' resources and prompts when it opens."""

    def __init__(self, composer: Any, source: McpSource, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.composer = composer
        self.source = source
        self._tasks = TaskSet("mcp picker", on_error=lambda exc: composer.status.setText(str(exc)))
        self.dialog: PromptDialog | None = None
        self._slash: dict[str, tuple[str, Any]] = {}
        self._listed: list[str] = []
        self.completer = QCompleter(self)
        self.names = QStandardItemModel(self.completer)  # shown: "/name — what it does · server"
        self.completer.setModel(self.names)
        self.completer.setCompletionRole(SLASH_ROLE)  # typed and matched: "/name"
        self.completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        self.completer.setWidget(composer.edit)
        self.completer.activated.connect(self._slash_picked)
        composer.edit.completer = self.completer  # the box leaves Enter / Escape to the open list
        composer.edit.textChanged.connect(self._slash_typed)

    # --- the "/" list ---------------------------------------------------------------------------
    def slash_items(self) -> dict[str, tuple[str, Any]]:
        """ "/name" -> (server, prompt); a name two servers share is told apart as "/server:name"."""
        prompts = self.source.prompts()
        counts: dict[str, int] = {}
        for _s, p in prompts:
            counts[p.name] = counts.get(p.name, 0) + 1
        return {(f"/{p.name}" if counts[p.name] == 1 else f"/{s}:{p.name}"): (s, p) for s, p in prompts}

    def _slash_typed(self) -> None:
        text = self.composer.edit.toPlainText()
        popup = self.completer.popup()
        assert popup is not None  # a completer always has its list
        if not _SLASH.fullmatch(text):
            popup.hide()
            return
        self._slash = self.slash_items()
        if self._listed != list(self._slash):
            self._listed = list(self._slash)
            self.names.clear()
            for key, (server, prompt) in self._slash.items():
                about = " ".join((getattr(prompt, "description", "") or "").split())
                row = QStandardItem(f"{key} — {about} · {server}" if about else f"{key} · {server}")
                row.setData(key, SLASH_ROLE)
                row.setEditable(False)
                self.names.appendRow(row)
        self.completer.setCompletionPrefix(text)
        if self.completer.completionCount() == 0:
            popup.hide()
            return
        edit = self.composer.edit
        rect = edit.cursorRect()
        rect.setWidth(max(240, popup.sizeHintForColumn(0) + 32))
        self.completer.complete(rect)

    def _slash_picked(self, item: str) -> None:
        picked = self._slash.get(item)
        if picked is None:
            return
        self.composer.edit.clear()
        self.use_prompt(*picked)

    def fill(self, menu: QMenu) -> None:
        resources = self.source.resources()
        prompts = self.source.prompts()
        if not resources and not prompts:
            return
        menu.addSeparator()
        if resources:
            sub = menu.addMenu(tr("composer.mcp_resources"))
            for server in dict.fromkeys(s for s, _r in resources):
                sub.addSection(server)
                for s, r in resources:
                    if s == server:
                        sub.addAction(r.name or str(r.uri), functools.partial(self._attach_later, s, r))
        if prompts:
            sub = menu.addMenu(tr("composer.mcp_prompts"))
            for server in dict.fromkeys(s for s, _p in prompts):
                sub.addSection(server)
                for s, p in prompts:
                    if s == server:
                        sub.addAction(p.name, functools.partial(self.use_prompt, s, p))

    def _attach_later(self, server: str, resource: Any) -> None:
        self._tasks.spawn(self.attach(server, resource))

    async def attach(self, server: str, resource: Any) -> list[Attachment]:
        """Read a resource and attach it to the message being written."""
        from weclaw_desktop.mcp.resources import attachment

        conn = self.source.connection(server)
        if conn is None:
            raise RuntimeError(tr("composer.mcp_gone", server=server))
        result = await conn.read_resource(str(resource.uri))
        folder: Path = self.composer.attachment_dir
        got = await attachment(result, label=f"{server}-resource", outputs_dir=folder)
        name = resource.name or str(resource.uri)
        made: list[Attachment] = []
        # binary parts come back as "[image/png saved to PATH]" lines: those travel as the files themselves
        body = "\n".join(line for line in got.text.splitlines() if not _SAVED.match(line))
        if body.strip():
            text, truncated = cap(body, MAX_TEXT_CHARS)
            made.append(
                Attachment(
                    name=name,
                    kind="text",
                    mime=getattr(resource, "mimeType", "") or "text/plain",
                    size=len(body.encode()),
                    path=str(resource.uri),
                    text=text,
                    chars=len(body),
                    truncated=truncated,
                    note=f"from the MCP server {server}",
                )
            )
        for image in got.images:
            try:
                data = await asyncio.to_thread(Path(image).read_bytes)
                made.append(store_image_bytes(data, store_dir=folder, name=Path(image).name))
            except (OSError, AttachmentError) as exc:
                log.warning("MCP image %s not attached: %s", image, exc)
        self.composer.restore(made)
        return made

    def use_prompt(self, server: str, prompt: Any) -> None:
        from weclaw_desktop.mcp.resources import prompt_fields

        fields = prompt_fields(prompt)
        if not fields:
            self._tasks.spawn(self.fill_prompt(server, prompt, {}))
            return
        dialog = PromptDialog(prompt.name, fields, self.composer.window())
        dialog.filled.connect(lambda values: self._tasks.spawn(self.fill_prompt(server, prompt, values)))
        self.dialog = dialog
        dialog.open()

    async def fill_prompt(self, server: str, prompt: Any, values: dict[str, str]) -> str:
        """Put the prompt's text in the message box (the user reads and sends it)."""
        from weclaw_desktop.mcp.resources import prompt_messages

        conn = self.source.connection(server)
        if conn is None:
            raise RuntimeError(tr("composer.mcp_gone", server=server))
        messages = prompt_messages(await conn.get_prompt(prompt.name, values))
        text = "\n\n".join(t for _role, t in messages)
        self.composer.edit.setPlainText(text)
        self.composer.edit.setFocus()
        return text
