"""Export a chat (Markdown, HTML, JSON) and import a JSON export, from the sidebar's menu.

The save dialog opens in Documents (else the home folder) with the chat's title as the file name; the format
follows the chosen filter. Writing is atomic (a temp file renamed), off the UI thread. Import makes a new chat
and opens it; a bad file is refused with the reason and nothing changes.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog, QWidget

from weclaw_desktop.i18n import Text, tr
from weclaw_desktop.ui.composer import start_folder
from weclaw_desktop.ui.tasks import TaskSet

if TYPE_CHECKING:
    from weclaw_desktop.ui.chat_controller import ChatController

FILTERS = (("md", "export.filter.md"), ("html", "export.filter.html"), ("json", "export.filter.json"))


def safe_name(title: str) -> str:
    name = re.sub(r'[\\/:*?"<>|\x00-\x1f]+', " ", title).strip(" .")[:80]
    return name or "chat"


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


class ChatExport(QObject):
    def __init__(self, controller: ChatController, parent_widget: QWidget) -> None:
        super().__init__(parent_widget)
        self.controller = controller
        self.parent_widget = parent_widget
        self._tasks = TaskSet("export")
        self.dialog: QFileDialog | None = None

    def export(self, session_id: str) -> None:
        self._tasks.spawn(self._ask_export(session_id))

    async def _ask_export(self, session_id: str) -> None:
        runtime = await self.controller.ready()
        info = await runtime.get_session(session_id)
        if info is None:
            return
        dialog = QFileDialog(self.parent_widget, tr("export.title"), start_folder())
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilters([tr(key) for _fmt, key in FILTERS])
        dialog.selectFile(safe_name(info.title) + ".md")
        dialog.fileSelected.connect(
            lambda path: self._tasks.spawn(self.write(session_id, Path(path), self._format(dialog)))
        )
        self.dialog = dialog
        dialog.open()

    @staticmethod
    def _format(dialog: QFileDialog) -> str:
        chosen = dialog.selectedNameFilter()
        return next((fmt for fmt, key in FILTERS if tr(key) == chosen), "md")

    async def write(self, session_id: str, path: Path, fmt: str) -> Path:
        """Write the export; the suffix follows the format. Says where it went, or why not, in the chat."""
        from weclaw_desktop.agent.export import export_html, export_json, export_markdown

        runtime = await self.controller.ready()
        if path.suffix.lower() != f".{fmt}":
            path = path.with_name(path.name + f".{fmt}")
        if fmt == "json":
            text = json.dumps(await export_json(runtime.history, session_id), ensure_ascii=False, indent=1) + "\n"
        elif fmt == "html":
            text = await export_html(runtime.history, session_id)
        else:
            text = await export_markdown(runtime.history, session_id)
        try:
            await asyncio.to_thread(_write, path, text)
        except OSError as exc:
            self.controller.chat.add_notice(
                Text("export.failed", path=str(path), reason=exc.strerror or str(exc)), "error"
            )
            return path
        self.controller.chat.add_notice(Text("export.done", path=str(path)), "info")
        return path

    def import_chat(self) -> None:
        dialog = QFileDialog(self.parent_widget, tr("import.title"), start_folder())
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.setNameFilters([tr("export.filter.json")])
        dialog.fileSelected.connect(lambda path: self._tasks.spawn(self.read(Path(path))))
        self.dialog = dialog
        dialog.open()

    async def read(self, path: Path) -> str:
        """Import ``path`` as a new chat and open it; '' when it was refused (the reason is shown)."""
        from weclaw_desktop.agent.export.dump import ChatImportError, import_json, read_document

        runtime = await self.controller.ready()
        try:
            doc = await asyncio.to_thread(read_document, path)
            session_id = await import_json(runtime.history, doc, image_dir=runtime.attachment_dir())
        except ChatImportError as exc:
            self.controller.chat.add_notice(Text("import.failed", reason=str(exc)), "error")
            return ""
        await self.controller.open_session(session_id)
        await self.controller.refresh_sessions()
        return session_id
