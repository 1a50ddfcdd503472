"""The message box: Enter sends, Shift+Enter adds a line, the Send button turns into Stop while a turn runs.

Files become attachments (``weclaw_desktop.attachments``: text extracted, images checked and copied) from the
paperclip (the picker opens in Documents, else the home folder), a drop, or a paste (a pasted image is saved as
a PNG in the app's attachment folder; large ones are scaled to 2048 px first). Files are read in a worker thread;
their chips say "Reading…" until then, and a message sent meanwhile waits for them. Under the box: the chat's
assistant and model pickers with what the model can do.

``send_requested(text, attachments)`` carries the ready :class:`Attachment` objects; the controller checks them
against the model (an image for a model that cannot see) and gives them back with :meth:`restore` when the
message could not be sent. While a sent message is being edited (:meth:`begin_edit`: its text and files back in
the box, a line saying so with a Cancel button), sending emits ``edit_submitted(run_id, text, attachments)``
instead: the message actions resend it as a new version beside the old one.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtCore import QBuffer, QByteArray, QEvent, QIODevice, QMimeData, QSize, QStandardPaths, Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QImage, QKeyEvent, QTextCursor
from PySide6.QtWidgets import (
    QCompleter,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from weclaw_desktop.attachments import Attachment, AttachmentError, prepare, store_image_bytes
from weclaw_desktop.i18n import tr
from weclaw_desktop.ui import icons
from weclaw_desktop.ui.attachment_chips import AttachmentChip
from weclaw_desktop.ui.model_switcher import AssistantPicker, CapsBadges, ModelSwitcher
from weclaw_desktop.ui.tasks import TaskSet

MAX_LINES = 8
_LIST_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Escape, Qt.Key.Key_Tab, Qt.Key.Key_Backtab)
MAX_PASTED_SIDE = 2048


def _local_files_in(mime: QMimeData) -> bool:
    return mime.hasUrls() and any(url.isLocalFile() for url in mime.urls())


def _local_files(event: QDragEnterEvent | QDropEvent) -> list[Path]:
    mime = event.mimeData()
    if not mime.hasUrls():
        return []
    return [Path(url.toLocalFile()) for url in mime.urls() if url.isLocalFile()]


def start_folder() -> str:
    """Where the file picker opens: the user's Documents folder when it exists, else the home folder."""
    docs = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    if docs and Path(docs).is_dir():
        return docs
    return str(Path.home())


def png_bytes(image: QImage) -> bytes:
    """A pasted image as PNG, scaled down to MAX_PASTED_SIDE on its long side (a 5K screenshot is 10+ MB)."""
    if max(image.width(), image.height()) > MAX_PASTED_SIDE:
        image = image.scaled(
            MAX_PASTED_SIDE,
            MAX_PASTED_SIDE,
            Qt.AspectRatioMode.KeepAspectRatio,
            Qt.TransformationMode.SmoothTransformation,
        )
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")  # type: ignore[call-overload]  # the stubs want bytes, PySide6 wants str
    buffer.close()
    return bytes(data.data())


#: Pasted text this long (or on several lines) counts as untrusted content for the chat (#13): it may be an
#: e-mail or a page someone else wrote, so its instructions must not send data out unasked.
PASTE_MIN_CHARS = 80


class MessageEdit(QPlainTextEdit):
    submit = Signal()
    files_dropped = Signal(list)
    image_pasted = Signal(QImage)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.completer: QCompleter | None = None  # the MCP picker's "/" list, when there is one
        self.pasted_chars = 0  # characters pasted into the message being written
        self.setAcceptDrops(True)
        self.setTabChangesFocus(True)
        self.retranslate()
        self.document().documentLayout().documentSizeChanged.connect(self._size_changed)  # bound: auto-disconnect
        self._fit()

    def retranslate(self) -> None:
        self.setPlaceholderText(tr("chat.placeholder"))
        self.setToolTip(tr("chat.keys"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        popup = self.completer.popup() if self.completer is not None else None
        if popup is not None and popup.isVisible() and event.key() in _LIST_KEYS:
            event.ignore()  # the "/" list picks (Enter, Tab) or closes (Escape)
            return
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            mods = event.modifiers()
            if mods & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
                return
            if not mods & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier):
                self.submit.emit()
                return
        super().keyPressEvent(event)

    # --- paste: images and files become attachments, text stays text -----------------------------
    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        return source.hasImage() or source.hasUrls() or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:
        files = [Path(u.toLocalFile()) for u in source.urls() if u.isLocalFile()] if source.hasUrls() else []
        if files:
            self.files_dropped.emit(files)
            return
        if source.hasImage():
            image = source.imageData()
            if isinstance(image, QImage) and not image.isNull():
                self.image_pasted.emit(image)
                return
        if source.hasText():
            text = source.text()
            self.pasted_chars += PASTE_MIN_CHARS if "\n" in text.strip() else len(text)
        super().insertFromMimeData(source)

    def pasted(self) -> bool:
        """The message holds pasted text (long or multi-line) that someone else may have written."""
        return self.pasted_chars >= PASTE_MIN_CHARS

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if _local_files(event):
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dragMoveEvent(self, event: QDragEnterEvent) -> None:  # type: ignore[override]
        if _local_files(event):
            event.acceptProposedAction()
        else:
            super().dragMoveEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:
        files = _local_files(event)
        if files:
            self.files_dropped.emit(files)
            event.acceptProposedAction()
        else:
            super().dropEvent(event)

    def _size_changed(self, _size: object) -> None:
        self._fit()

    def _fit(self) -> None:
        lines = max(1, round(self.document().size().height()))  # the plain-text layout counts lines
        shown = min(MAX_LINES, lines)
        self.setVerticalScrollBarPolicy(
            Qt.ScrollBarPolicy.ScrollBarAsNeeded if lines > MAX_LINES else Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        )
        margins = self.contentsMargins()
        chrome = 2 * self.document().documentMargin() + margins.top() + margins.bottom() + 10
        self.setFixedHeight(round(shown * self.fontMetrics().lineSpacing() + chrome))


class Composer(QFrame):
    """Emits ``send_requested(text, attachments)`` and ``stop_requested``."""

    send_requested = Signal(str, list)
    edit_submitted = Signal(str, str, list)  # run id of the edited message, its new text, attachments
    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Composer")
        self.chips_list: list[AttachmentChip] = []
        self.busy = False
        self.attachment_dir = Path.home() / ".weclaw-attachments"  # the controller sets the app's folder
        self._tasks = TaskSet("composer")
        self._send_when_ready = False
        self._draft: tuple[str, list[Attachment]] = ("", [])
        self.editing = ""  # the run id of the sent message being edited ('' = writing a new one)
        self.submitted_pasted = False  # the message just sent held pasted text (see MessageEdit.pasted)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(10, 8, 10, 6)
        outer.setSpacing(4)
        self.edit_bar = QWidget()  # "Editing a sent message…  [Cancel editing]"
        edit_row = QHBoxLayout(self.edit_bar)
        edit_row.setContentsMargins(0, 0, 0, 0)
        self.edit_label = QLabel()
        self.edit_label.setObjectName("Muted")
        self.edit_cancel = QPushButton()
        self.edit_cancel.setFlat(True)
        self.edit_cancel.clicked.connect(self.cancel_edit)
        edit_row.addWidget(self.edit_label, 1)
        edit_row.addWidget(self.edit_cancel)
        self.edit_bar.setVisible(False)
        outer.addWidget(self.edit_bar)
        holder = QWidget()
        self.chips = QHBoxLayout(holder)
        self.chips.setContentsMargins(0, 0, 0, 0)
        self.chips.setSpacing(6)
        self.chips.addStretch(1)
        self.chip_area = QScrollArea()  # many files scroll sideways instead of squeezing each chip
        self.chip_area.setObjectName("ChipArea")
        self.chip_area.setWidget(holder)
        self.chip_area.setWidgetResizable(True)
        self.chip_area.setFrameShape(QFrame.Shape.NoFrame)
        self.chip_area.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.chip_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.chip_area.setFixedHeight(holder.sizeHint().height() + 44)
        self.chip_area.setVisible(False)
        outer.addWidget(self.chip_area)
        row = QHBoxLayout()
        row.setSpacing(8)
        self.attach = QToolButton()
        icons.bind(self.attach, "paperclip")
        self.attach.setIconSize(QSize(18, 18))
        self.attach.setAutoRaise(True)
        self.attach.clicked.connect(self._choose_files)
        self.attach_menu = QMenu(self.attach)  # Files…, and MCP resources / prompts when servers have them
        self.attach_menu.aboutToShow.connect(self._fill_attach_menu)
        self.mcp: Any = None  # ui/mcp_picker.McpPicker, set by the composition root when MCP runs
        row.addWidget(self.attach, 0, Qt.AlignmentFlag.AlignBottom)
        self.edit = MessageEdit()
        self.edit.submit.connect(self._submit)
        self.edit.files_dropped.connect(self.add_attachments)
        self.edit.image_pasted.connect(self.add_image)
        row.addWidget(self.edit, 1)
        self.button = QPushButton()
        self.button.setProperty("primary", True)
        self.button.setIconSize(QSize(16, 16))
        self.button.setMinimumWidth(88)
        self.button.clicked.connect(self._button_clicked)
        row.addWidget(self.button, 0, Qt.AlignmentFlag.AlignBottom)
        outer.addLayout(row)
        pickers = QHBoxLayout()
        pickers.setContentsMargins(0, 0, 0, 0)
        pickers.setSpacing(2)
        self.assistant_picker = AssistantPicker()
        self.model_switcher = ModelSwitcher()
        self.caps = CapsBadges()
        pickers.addWidget(self.assistant_picker)
        pickers.addWidget(self.model_switcher)
        pickers.addWidget(self.caps)
        pickers.addStretch(1)
        self.status = QLabel()
        self.status.setObjectName("Muted")
        pickers.addWidget(self.status)
        outer.addLayout(pickers)
        self.setAcceptDrops(True)
        self.set_busy(False)
        self.retranslate()

    def retranslate(self) -> None:
        self.attach.setToolTip(tr("chat.attach"))
        self.edit_label.setText(tr("composer.editing"))
        self.edit_cancel.setText(tr("composer.cancel_edit"))
        self.button.setText(tr("chat.stop") if self.busy else tr("chat.send"))
        if self._send_when_ready:
            self.status.setText(tr("attach.waiting"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    # --- attachments ----------------------------------------------------------------------------
    @property
    def attachments(self) -> list[Attachment]:
        """The attachments read so far (chips still reading or failed are not included)."""
        return [c.attachment for c in self.chips_list if c.attachment is not None]

    @property
    def reading(self) -> bool:
        return any(not c.ready and not c.error for c in self.chips_list)

    def _chip(self, name: str) -> AttachmentChip:
        chip = AttachmentChip(name)
        chip.removed.connect(self._remove_chip)
        self.chips_list.append(chip)
        self.chips.insertWidget(self.chips.count() - 1, chip)
        self.chip_area.setVisible(True)
        return chip

    def add_attachments(self, paths: list[Path]) -> list[AttachmentChip]:
        """Attach files (read in a worker thread); a file already attached is not added twice."""
        have = {c.source for c in self.chips_list}
        made = []
        for path in paths:
            if str(path) in have:
                continue
            chip = self._chip(path.name)
            chip.source = str(path)
            self._tasks.spawn(self._read(chip, path))
            made.append(chip)
        return made

    async def _read(self, chip: AttachmentChip, path: Path) -> None:
        try:
            att = await asyncio.to_thread(prepare, path, store_dir=self.attachment_dir)
        except AttachmentError as exc:
            chip.set_error(str(exc))
        else:
            chip.set_attachment(att)
        self._maybe_send()

    def add_image(self, image: QImage) -> AttachmentChip:
        """A pasted image: saved as PNG in the attachment folder."""
        chip = self._chip(tr("attach.pasted_name"))
        data = png_bytes(image)
        self._tasks.spawn(self._store(chip, data))
        return chip

    async def _store(self, chip: AttachmentChip, data: bytes) -> None:
        try:
            att = await asyncio.to_thread(
                store_image_bytes, data, store_dir=self.attachment_dir, name=chip.name + ".png"
            )
        except AttachmentError as exc:
            chip.set_error(str(exc))
        else:
            chip.set_attachment(att)
        self._maybe_send()

    def restore(self, attachments: list[Attachment]) -> None:
        """Put attachments back (a message that could not be sent keeps them)."""
        for att in attachments:
            self._chip(att.name).set_attachment(att)

    def _remove_chip(self, chip: AttachmentChip) -> None:
        if chip in self.chips_list:
            self.chips_list.remove(chip)
        self.chips.removeWidget(chip)
        chip.deleteLater()
        self.chip_area.setVisible(bool(self.chips_list))
        self._maybe_send()

    def clear_attachments(self) -> None:
        for chip in list(self.chips_list):
            self._remove_chip(chip)

    def set_mcp_source(self, source: Any) -> None:
        """Offer the resources and prompts of ``source`` (the app's MCP manager): the paperclip's menu, the "/" list."""
        from weclaw_desktop.ui.mcp_picker import McpPicker

        self.mcp = McpPicker(self, source, self)
        self.attach.setMenu(self.attach_menu)
        self.attach.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)

    def _fill_attach_menu(self) -> None:
        menu = self.attach_menu
        menu.clear()
        menu.addAction(tr("composer.files"), self._choose_files)
        if self.mcp is not None:
            self.mcp.fill(menu)

    def _choose_files(self) -> None:
        dialog = QFileDialog(self, tr("chat.attach"), start_folder())
        dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
        dialog.filesSelected.connect(lambda files: self.add_attachments([Path(f) for f in files]))
        dialog.open()
        self.file_dialog = dialog  # tests

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if _local_files(event):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        files = _local_files(event)
        if files:
            self.add_attachments(files)
            event.acceptProposedAction()

    # --- editing a sent message -----------------------------------------------------------------
    def begin_edit(self, run_id: str, text: str, attachments: list[Attachment] | None = None) -> None:
        """Put a sent message back in the box to change it; sending then makes a new version of it."""
        if not self.editing:
            self._draft = (self.edit.toPlainText(), self.attachments)  # what was being written comes back
        self.editing = run_id
        self.clear_attachments()
        self.restore(list(attachments or []))
        self.edit.setPlainText(text)
        self.edit.moveCursor(QTextCursor.MoveOperation.End)
        self.edit_bar.setVisible(True)
        self.edit.setFocus()

    def cancel_edit(self) -> None:
        if not self.editing:
            return
        self.editing = ""
        self.edit_bar.setVisible(False)
        text, attachments = self._draft
        self._draft = ("", [])
        self.clear_attachments()
        self.edit.setPlainText(text)
        self.restore(attachments)

    # --- sending --------------------------------------------------------------------------------
    def message_text(self) -> str:
        return self.edit.toPlainText().strip()

    def _submit(self) -> None:
        if self.busy:
            return
        if not self.message_text() and not self.chips_list:
            return
        if self.reading:  # send once the files are read
            self._send_when_ready = True
            self.status.setText(tr("attach.waiting"))
            return
        text = self.message_text()
        attachments = self.attachments
        if not text and not attachments:
            return
        self.submitted_pasted = self.edit.pasted()
        self.edit.pasted_chars = 0
        self.edit.clear()
        self.clear_attachments()
        if self.editing:
            run_id, self.editing = self.editing, ""
            self.edit_bar.setVisible(False)
            text_back, files_back = self._draft
            self._draft = ("", [])
            self.edit.setPlainText(text_back)
            self.restore(files_back)
            self.edit_submitted.emit(run_id, text, attachments)
            return
        self.send_requested.emit(text, attachments)

    def _maybe_send(self) -> None:
        if self._send_when_ready and not self.reading:
            self._send_when_ready = False
            self.status.clear()
            self._submit()

    def _button_clicked(self) -> None:
        if self.busy:
            self.stop_requested.emit()
        else:
            self._submit()

    def set_busy(self, busy: bool) -> None:
        self.busy = busy
        if busy:
            self.button.setText(tr("chat.stop"))
            self.button.setIcon(icons.icon("stop", "#ffffff"))
            self.button.setProperty("primary", False)
            self.button.setProperty("danger", True)
        else:
            self.button.setText(tr("chat.send"))
            self.button.setIcon(icons.icon("send", "#ffffff"))
            self.button.setProperty("danger", False)
            self.button.setProperty("primary", True)
        style = self.button.style()
        style.unpolish(self.button)
        style.polish(self.button)
