"""The message box: Enter sends, Shift+Enter adds a line, dropped files are attached as paths, and the
Send button turns into Stop while a turn runs."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QMimeData, QSize, Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QKeyEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from weclaw_desktop.i18n import tr
from weclaw_desktop.ui import icons

MAX_LINES = 8


def _local_files_in(mime: QMimeData) -> bool:
    return mime.hasUrls() and any(url.isLocalFile() for url in mime.urls())


def _local_files(event: QDragEnterEvent | QDropEvent) -> list[Path]:
    mime = event.mimeData()
    if not mime.hasUrls():
        return []
    return [Path(url.toLocalFile()) for url in mime.urls() if url.isLocalFile()]


#: Pasted text this long (or on several lines) counts as untrusted content for the chat (#13): it may be an
#: e-mail or a page someone else wrote, so its instructions must not send data out unasked.
PASTE_MIN_CHARS = 80


class MessageEdit(QPlainTextEdit):
    submit = Signal()
    files_dropped = Signal(list)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
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
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            mods = event.modifiers()
            if mods & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
                return
            if not mods & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier):
                self.submit.emit()
                return
        super().keyPressEvent(event)

    def insertFromMimeData(self, source: QMimeData) -> None:
        if source.hasText() and not _local_files_in(source):
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


class AttachmentChip(QFrame):
    removed = Signal(object)

    def __init__(self, path: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = path
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 2, 2, 2)
        layout.setSpacing(4)
        button = QToolButton()
        button.setText(path.name)
        icons.bind(button, "paperclip")
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        button.setAutoRaise(True)
        button.setToolTip(str(path))
        layout.addWidget(button)
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.setAutoRaise(True)
        self.close_button.clicked.connect(lambda: self.removed.emit(self.path))
        layout.addWidget(self.close_button)
        self.retranslate()

    def retranslate(self) -> None:
        self.close_button.setToolTip(tr("chat.remove_attachment"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)


class Composer(QFrame):
    """Emits ``send_requested(text)`` (attachments already appended as paths) and ``stop_requested``."""

    send_requested = Signal(str)
    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Composer")
        self.attachments: list[Path] = []
        self.busy = False
        self.submitted_pasted = False  # the message just sent held pasted text (see MessageEdit.pasted)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(10, 8, 10, 8)
        outer.setSpacing(4)
        self.chips = QHBoxLayout()
        self.chips.setSpacing(4)
        self.chips.addStretch(1)
        outer.addLayout(self.chips)
        row = QHBoxLayout()
        row.setSpacing(8)
        self.attach = QToolButton()
        icons.bind(self.attach, "paperclip")
        self.attach.setIconSize(QSize(18, 18))
        self.attach.setAutoRaise(True)
        self.attach.clicked.connect(self._choose_files)
        row.addWidget(self.attach, 0, Qt.AlignmentFlag.AlignBottom)
        self.edit = MessageEdit()
        self.edit.submit.connect(self._submit)
        self.edit.files_dropped.connect(self.add_attachments)
        row.addWidget(self.edit, 1)
        self.button = QPushButton()
        self.button.setProperty("primary", True)
        self.button.setIconSize(QSize(16, 16))
        self.button.setMinimumWidth(88)
        self.button.clicked.connect(self._button_clicked)
        row.addWidget(self.button, 0, Qt.AlignmentFlag.AlignBottom)
        outer.addLayout(row)
        self.setAcceptDrops(True)
        self.set_busy(False)
        self.retranslate()

    def retranslate(self) -> None:
        self.attach.setToolTip(tr("chat.attach"))
        self.button.setText(tr("chat.stop") if self.busy else tr("chat.send"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    # --- attachments ----------------------------------------------------------------------------
    def add_attachments(self, paths: list[Path]) -> None:
        for path in paths:
            if path in self.attachments:
                continue
            self.attachments.append(path)
            chip = AttachmentChip(path)
            chip.removed.connect(self._remove_attachment)
            self.chips.insertWidget(self.chips.count() - 1, chip)

    def _remove_attachment(self, path: Path) -> None:
        if path in self.attachments:
            self.attachments.remove(path)
        for i in range(self.chips.count()):
            item = self.chips.itemAt(i)
            widget = item.widget() if item is not None else None
            if isinstance(widget, AttachmentChip) and widget.path == path:
                self.chips.removeWidget(widget)
                widget.deleteLater()
                break

    def _choose_files(self) -> None:
        dialog = QFileDialog(self)
        dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
        dialog.filesSelected.connect(lambda files: self.add_attachments([Path(f) for f in files]))
        dialog.open()

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if _local_files(event):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        files = _local_files(event)
        if files:
            self.add_attachments(files)
            event.acceptProposedAction()

    # --- sending --------------------------------------------------------------------------------
    def message_text(self) -> str:
        text = self.edit.toPlainText().strip()
        if self.attachments:
            listed = "\n".join(f"- {p}" for p in self.attachments)
            text = f"{text}\n\n{tr('chat.attached')}\n{listed}".strip()
        return text

    def _submit(self) -> None:
        if self.busy:
            return
        text = self.message_text()
        if not text:
            return
        self.submitted_pasted = self.edit.pasted()
        self.edit.pasted_chars = 0
        self.edit.clear()
        for path in list(self.attachments):
            self._remove_attachment(path)
        self.send_requested.emit(text)

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
