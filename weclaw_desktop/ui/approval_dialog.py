"""The approval dialog and the GUI's :class:`ApprovalGate`.

The dialog is non-modal and awaited through an ``asyncio.Future`` (never ``exec()`` inside a
coroutine: that nests a Qt loop on qasync and hangs). Closing the dialog denies. If the turn is
cancelled while the dialog is open (Stop), the dialog closes and the cancellation propagates.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from weclaw_desktop.toolkit.approval import ApprovalDecision, ApprovalRequest, ApprovalResult, DecidedBy
from weclaw_desktop.toolkit.registry import ToolRegistry
from weclaw_desktop.ui import icons, theme
from weclaw_desktop.ui.arguments import readable_arguments
from weclaw_desktop.ui.i18n import TABLE, pick, tr


class ApprovalDialog(QDialog):
    def __init__(self, req: ApprovalRequest, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.req = req
        self.decision: ApprovalDecision | None = None
        self._callbacks: list[Callable[[ApprovalDecision], None]] = []
        self.setWindowTitle(tr("approval.title"))
        self.setModal(False)
        self.setWindowModality(Qt.WindowModality.NonModal)
        self.setMinimumWidth(480)
        c = theme.colors()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(20, 18, 20, 16)
        layout.setSpacing(10)

        head = QHBoxLayout()
        head.setSpacing(12)
        risk_color = {"high": c.danger, "medium": c.warning}.get(req.risk.value, c.accent)
        glyph = QLabel()
        glyph.setPixmap(icons.pixmap("shield", 36, risk_color))
        glyph.setAlignment(Qt.AlignmentFlag.AlignTop)
        head.addWidget(glyph)
        text = QVBoxLayout()
        text.setSpacing(4)
        heading = QLabel(tr("approval.title"))
        heading.setObjectName("Title")
        text.addWidget(heading)
        self.body = QLabel(tr("approval.body", tool=f"<b>{title}</b>", action=f"<b>{req.action}</b>"))
        self.body.setTextFormat(Qt.TextFormat.RichText)
        self.body.setWordWrap(True)
        text.addWidget(self.body)
        risk_name = tr(f"risk.{req.risk.value}")
        origin_key = f"origin.{req.origin.value}"
        self.risk = QLabel(
            f"<span style='color:{risk_color}; font-weight:600'>{tr('approval.risk', risk=risk_name)}</span>"
            f"&nbsp;&nbsp;·&nbsp;&nbsp;{tr('approval.origin', origin=tr(origin_key) if origin_key in TABLE else req.origin.value)}"
        )
        self.risk.setTextFormat(Qt.TextFormat.RichText)
        text.addWidget(self.risk)
        if req.reason:
            reason = QLabel(tr("approval.reason", reason=req.reason))
            reason.setWordWrap(True)
            text.addWidget(reason)
        head.addLayout(text, 1)
        layout.addLayout(head)

        label = QLabel(tr("approval.arguments"))
        label.setObjectName("Section")
        layout.addWidget(label)
        self.arguments = QPlainTextEdit(readable_arguments(req.arguments))
        self.arguments.setReadOnly(True)
        self.arguments.setFont(theme.mono_font())
        self.arguments.setMinimumHeight(90)
        self.arguments.setMaximumHeight(180)
        layout.addWidget(self.arguments)
        function = QLabel(f"{req.function}")
        function.setObjectName("Muted")
        layout.addWidget(function)

        buttons = QHBoxLayout()
        buttons.setSpacing(8)
        self.deny_button = QPushButton(tr("approval.deny"))
        self.session_button = QPushButton(tr("approval.allow_session"))
        self.once_button = QPushButton(tr("approval.allow_once"))
        self.once_button.setProperty("primary", True)
        self.once_button.setDefault(True)
        buttons.addWidget(self.deny_button)
        buttons.addStretch(1)
        buttons.addWidget(self.session_button)
        buttons.addWidget(self.once_button)
        layout.addLayout(buttons)
        self.deny_button.clicked.connect(lambda: self.decide(ApprovalDecision.DENY))
        self.session_button.clicked.connect(lambda: self.decide(ApprovalDecision.ALLOW_SESSION))
        self.once_button.clicked.connect(lambda: self.decide(ApprovalDecision.ALLOW_ONCE))

    def on_decided(self, callback: Callable[[ApprovalDecision], None]) -> None:
        self._callbacks.append(callback)

    def decide(self, decision: ApprovalDecision) -> None:
        if self.decision is not None:
            return
        self.decision = decision
        for callback in self._callbacks:
            callback(decision)
        self.close()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.decision is None:
            self.decide(ApprovalDecision.DENY)
        super().closeEvent(event)


class QtApprovalGate:
    """Asks the user with a non-modal :class:`ApprovalDialog` and awaits the answer."""

    def __init__(self, parent: QWidget | None, registry: ToolRegistry) -> None:
        self._parent = parent
        self._registry = registry
        self.open_dialogs: list[ApprovalDialog] = []
        self.listeners: list[Callable[[ApprovalDialog], None]] = []  # tests and the window hook in here

    def _title(self, tool: str) -> str:
        return pick(self._registry.spec(tool).display.name) if self._registry.has_tool(tool) else tool

    async def request(self, req: ApprovalRequest) -> ApprovalResult:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[ApprovalDecision] = loop.create_future()
        dialog = ApprovalDialog(req, self._title(req.tool), self._parent)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)

        def decided(decision: ApprovalDecision) -> None:
            if not future.done():
                future.set_result(decision)

        dialog.on_decided(decided)
        self.open_dialogs.append(dialog)
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()
        for listener in list(self.listeners):
            listener(dialog)
        try:
            decision = await future
        except asyncio.CancelledError:
            if shiboken6.isValid(dialog):  # still open (not answered and deleted meanwhile)
                dialog.decision = ApprovalDecision.DENY  # closing must not report a decision any more
                dialog.close()
            raise
        finally:
            if dialog in self.open_dialogs:
                self.open_dialogs.remove(dialog)
        note = "" if decision.allowed else "the user said no"
        return ApprovalResult(decision, decided_by=DecidedBy.USER, note=note)
