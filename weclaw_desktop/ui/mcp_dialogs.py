"""What an MCP server asks of the person, in the GUI: an elicitation form, a URL to open, a sampling request.

:class:`QtUserAgent` implements ``mcp.interact.UserAgent``. Each request gets a non-modal dialog that
is awaited through an ``asyncio.Future`` (never ``exec()`` inside a coroutine):

- :class:`ElicitationDialog`: the form generated from the requested schema (text, numbers, a switch, a
  list to pick one or several from), checked against that schema before it is sent; Submit / Decline /
  Cancel (closing the window is Cancel);
- a URL request shows the address; Open takes the user there (the browser), Decline refuses;
- :class:`SamplingDialog`: exactly what the server wants the user's model to read (system prompt and
  messages) and the length limit; Send / Refuse (closing is Refuse).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import shiboken6
from PySide6.QtCore import QEvent, Qt, QUrl
from PySide6.QtGui import QCloseEvent, QDesktopServices, QDoubleValidator, QIntValidator
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from weclaw_desktop.i18n import tr
from weclaw_desktop.mcp.interact import ElicitAnswer, FormField, FormRequest, SamplingRequest, UrlRequest


class ElicitationDialog(QDialog):
    """The form a server asked for; ``answer`` is set once the user submits, declines or cancels."""

    def __init__(self, request: FormRequest | UrlRequest, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.request = request
        self.answer: ElicitAnswer | None = None
        self._callbacks: list[Callable[[ElicitAnswer], None]] = []
        self.inputs: dict[str, QWidget] = {}
        self._labels: dict[str, QLabel] = {}
        self.setMinimumWidth(440)
        layout = QVBoxLayout(self)
        layout.setSpacing(10)
        self.heading = QLabel()
        self.heading.setObjectName("Title")
        self.heading.setWordWrap(True)
        layout.addWidget(self.heading)
        self.message = QLabel(request.message)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.message)
        self.form = QFormLayout()
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        if isinstance(request, UrlRequest):
            self.url = QLineEdit(request.url)
            self.url.setReadOnly(True)
            layout.addWidget(self.url)
        else:
            for field in request.fields:
                widget = self._input(field)
                label = QLabel(field.label + (" *" if field.required else ""))
                label.setToolTip(field.description)
                widget.setToolTip(field.description)
                self._labels[field.name] = label
                self.inputs[field.name] = widget
                self.form.addRow(label, widget)
            layout.addLayout(self.form)
        self.problems = QLabel()
        self.problems.setObjectName("Error")
        self.problems.setWordWrap(True)
        self.problems.setVisible(False)
        layout.addWidget(self.problems)
        buttons = QHBoxLayout()
        self.cancel_button = QPushButton()
        self.decline_button = QPushButton()
        self.submit_button = QPushButton()
        self.submit_button.setProperty("primary", True)
        self.submit_button.setDefault(True)
        buttons.addWidget(self.cancel_button)
        buttons.addStretch(1)
        buttons.addWidget(self.decline_button)
        buttons.addWidget(self.submit_button)
        layout.addLayout(buttons)
        self.cancel_button.clicked.connect(lambda: self.finish(ElicitAnswer("cancel")))
        self.decline_button.clicked.connect(lambda: self.finish(ElicitAnswer("decline")))
        self.submit_button.clicked.connect(self.submit)
        self.retranslate()

    def _input(self, field: FormField) -> QWidget:
        if field.kind == "boolean":
            box = QCheckBox()
            box.setChecked(bool(field.default))
            return box
        if field.kind == "choice":
            combo = QComboBox()
            if not field.required:
                combo.addItem("", None)
            for value, label in field.choices:
                combo.addItem(label, value)
            if field.default is not None:
                combo.setCurrentIndex(max(0, combo.findData(str(field.default))))
            return combo
        if field.kind == "choices":
            items = QListWidget()
            chosen = {str(v) for v in field.default or []} if isinstance(field.default, list) else set()
            for value, label in field.choices:
                item = QListWidgetItem(label)
                item.setData(Qt.ItemDataRole.UserRole, value)
                item.setCheckState(Qt.CheckState.Checked if value in chosen else Qt.CheckState.Unchecked)
                items.addItem(item)
            items.setMaximumHeight(min(160, 24 * max(2, len(field.choices)) + 8))
            return items
        edit = QLineEdit()
        if field.kind == "integer":
            edit.setValidator(QIntValidator(edit))
        elif field.kind == "number":
            edit.setValidator(QDoubleValidator(edit))
        if field.default is not None:
            edit.setText(str(field.default))
        edit.setPlaceholderText(field.description or field.format)
        return edit

    def values(self) -> dict[str, Any]:
        """The form's content as the server will get it (empty optional fields left out)."""
        out: dict[str, Any] = {}
        if not isinstance(self.request, FormRequest):
            return out
        for field in self.request.fields:
            widget = self.inputs[field.name]
            if isinstance(widget, QCheckBox):
                out[field.name] = widget.isChecked()
            elif isinstance(widget, QComboBox):
                if widget.currentData() is not None:
                    out[field.name] = widget.currentData()
            elif isinstance(widget, QListWidget):
                picked = [
                    str(widget.item(i).data(Qt.ItemDataRole.UserRole))
                    for i in range(widget.count())
                    if widget.item(i).checkState() == Qt.CheckState.Checked
                ]
                if picked or field.required:
                    out[field.name] = picked
            elif isinstance(widget, QLineEdit) and widget.text().strip():
                text = widget.text().strip()
                try:
                    out[field.name] = (
                        int(text) if field.kind == "integer" else float(text) if field.kind == "number" else text
                    )
                except ValueError:
                    out[field.name] = text  # the schema check names the problem
        return out

    def submit(self) -> None:
        if isinstance(self.request, UrlRequest):
            QDesktopServices.openUrl(QUrl(self.request.url))
            self.finish(ElicitAnswer("accept"))
            return
        content = self.values()
        problems = self.request.problems(content)
        if problems:
            self.problems.setText(tr("mcp.elicit.invalid", problems="; ".join(problems)))
            self.problems.setVisible(True)
            return
        self.finish(ElicitAnswer("accept", content))

    def retranslate(self) -> None:
        self.setWindowTitle(tr("mcp.elicit.title"))
        self.heading.setText(tr("mcp.elicit.heading", server=self.request.server))
        self.cancel_button.setText(tr("mcp.elicit.cancel"))
        self.decline_button.setText(tr("mcp.elicit.decline"))
        self.submit_button.setText(
            tr("mcp.elicit.open" if isinstance(self.request, UrlRequest) else "mcp.elicit.submit")
        )

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def on_answer(self, callback: Callable[[ElicitAnswer], None]) -> None:
        self._callbacks.append(callback)

    def finish(self, answer: ElicitAnswer) -> None:
        if self.answer is not None:
            return
        self.answer = answer
        for callback in self._callbacks:
            callback(answer)
        self.close()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.answer is None:
            self.finish(ElicitAnswer("cancel"))
        super().closeEvent(event)


class SamplingDialog(QDialog):
    """Asks before a server's request goes to the user's model, showing all of it."""

    def __init__(self, request: SamplingRequest, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.request = request
        self.approved: bool | None = None
        self._callbacks: list[Callable[[bool], None]] = []
        self.setMinimumSize(480, 320)
        layout = QVBoxLayout(self)
        self.heading = QLabel()
        self.heading.setObjectName("Title")
        self.heading.setWordWrap(True)
        layout.addWidget(self.heading)
        self.body = QLabel()
        self.body.setWordWrap(True)
        layout.addWidget(self.body)
        shown = ([f"[system] {request.system_prompt}"] if request.system_prompt else []) + [
            f"[{role}] {text}" for role, text in request.messages
        ]
        self.content = QPlainTextEdit("\n\n".join(shown))
        self.content.setReadOnly(True)
        layout.addWidget(self.content, 1)
        buttons = QHBoxLayout()
        self.refuse_button = QPushButton()
        self.send_button = QPushButton()
        self.send_button.setProperty("primary", True)
        buttons.addWidget(self.refuse_button)
        buttons.addStretch(1)
        buttons.addWidget(self.send_button)
        layout.addLayout(buttons)
        self.refuse_button.clicked.connect(lambda: self.finish(False))
        self.send_button.clicked.connect(lambda: self.finish(True))
        self.retranslate()

    def retranslate(self) -> None:
        self.setWindowTitle(tr("mcp.sampling.title"))
        self.heading.setText(tr("mcp.sampling.heading", server=self.request.server))
        self.body.setText(tr("mcp.sampling.body", n=self.request.max_tokens))
        self.refuse_button.setText(tr("mcp.sampling.refuse"))
        self.send_button.setText(tr("mcp.sampling.send"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def on_answer(self, callback: Callable[[bool], None]) -> None:
        self._callbacks.append(callback)

    def finish(self, approved: bool) -> None:
        if self.approved is not None:
            return
        self.approved = approved
        for callback in self._callbacks:
            callback(approved)
        self.close()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.approved is None:
            self.finish(False)
        super().closeEvent(event)


class QtUserAgent:
    """The person at the desktop, reached through non-modal dialogs."""

    def __init__(self, parent: QWidget | None = None) -> None:
        self._parent = parent
        self.open_dialogs: list[QDialog] = []
        self.listeners: list[Callable[[QDialog], None]] = []  # tests and screenshots hook in here

    async def _show(self, dialog: QDialog, future: asyncio.Future[Any], cancelled: Callable[[], None]) -> Any:
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        self.open_dialogs.append(dialog)
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()
        for listener in list(self.listeners):
            listener(dialog)
        try:
            return await future
        except asyncio.CancelledError:
            if shiboken6.isValid(dialog):
                cancelled()
                dialog.close()
            raise
        finally:
            if dialog in self.open_dialogs:
                self.open_dialogs.remove(dialog)

    async def elicit(self, request: FormRequest | UrlRequest) -> ElicitAnswer:
        future: asyncio.Future[ElicitAnswer] = asyncio.get_running_loop().create_future()
        dialog = ElicitationDialog(request, self._parent)
        dialog.on_answer(lambda a: _settle(future, a))
        answer: ElicitAnswer = await self._show(
            dialog, future, lambda: setattr(dialog, "answer", ElicitAnswer("cancel"))
        )
        return answer

    async def approve_sampling(self, request: SamplingRequest) -> bool:
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        dialog = SamplingDialog(request, self._parent)
        dialog.on_answer(lambda ok: _settle(future, ok))
        approved: bool = await self._show(dialog, future, lambda: setattr(dialog, "approved", False))
        return approved


def _settle(future: asyncio.Future[Any], value: Any) -> None:
    if not future.done():
        future.set_result(value)
