"""The approval dialog and the GUI's :class:`ApprovalGate`.

The dialog is non-modal and awaited through an ``asyncio.Future`` (never ``exec()`` inside a
coroutine: that nests a Qt loop on qasync and hangs). Closing the dialog denies. If the turn is
cancelled while the dialog is open (Stop), the dialog closes and the cancellation propagates.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import shiboken6
from PySide6.QtCore import QEvent, Qt
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

from weclaw_desktop.i18n import has, pick, tr
from weclaw_desktop.toolkit.approval import ApprovalDecision, ApprovalRequest, ApprovalResult, DecidedBy
from weclaw_desktop.toolkit.registry import ToolRegistry
from weclaw_desktop.ui import icons, theme
from weclaw_desktop.ui.arguments import readable_arguments
from weclaw_desktop.ui.translation import mark_content


class ApprovalDialog(QDialog):
    def __init__(self, req: ApprovalRequest, title: str | Callable[[], str], parent: QWidget | None = None) -> None:
        """``title``: the tool's display name, or a function giving it in the UI language."""
        super().__init__(parent)
        self.req = req
        self._title = title
        self.decision: ApprovalDecision | None = None
        self._callbacks: list[Callable[[ApprovalDecision], None]] = []
        self.setModal(False)
        self.setWindowModality(Qt.WindowModality.NonModal)
        self.setMinimumWidth(480)
        c = theme.colors()
        self._risk_color = {"high": c.danger, "medium": c.warning}.get(req.risk.value, c.accent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(20, 18, 20, 16)
        layout.setSpacing(10)

        head = QHBoxLayout()
        head.setSpacing(12)
        glyph = QLabel()
        glyph.setPixmap(icons.pixmap("shield", 36, self._risk_color))
        glyph.setAlignment(Qt.AlignmentFlag.AlignTop)
        head.addWidget(glyph)
        text = QVBoxLayout()
        text.setSpacing(4)
        self.heading = QLabel()
        self.heading.setObjectName("Title")
        text.addWidget(self.heading)
        self.body = QLabel()
        self.body.setTextFormat(Qt.TextFormat.RichText)
        self.body.setWordWrap(True)
        text.addWidget(self.body)
        self.risk = QLabel()
        self.risk.setTextFormat(Qt.TextFormat.RichText)
        text.addWidget(self.risk)
        self.reason = QLabel()
        self.reason.setWordWrap(True)
        self.reason.setVisible(bool(req.reason))
        text.addWidget(self.reason)
        head.addLayout(text, 1)
        layout.addLayout(head)

        self.arguments_title = QLabel()
        self.arguments_title.setObjectName("Section")
        layout.addWidget(self.arguments_title)
        self.arguments = QPlainTextEdit(readable_arguments(req.arguments))
        mark_content(self.arguments)
        self.arguments.setReadOnly(True)
        self.arguments.setFont(theme.mono_font())
        self.arguments.setMinimumHeight(90)
        self.arguments.setMaximumHeight(180)
        layout.addWidget(self.arguments)
        function = QLabel(f"{req.function}")
        mark_content(function)
        function.setObjectName("Muted")
        layout.addWidget(function)

        buttons = QHBoxLayout()
        buttons.setSpacing(8)
        self.deny_button = QPushButton()
        self.session_button = QPushButton()
        self.once_button = QPushButton()
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
        self.retranslate()

    def retranslate(self) -> None:
        req = self.req
        title = self._title() if callable(self._title) else self._title
        self.setWindowTitle(tr("approval.title"))
        self.heading.setText(tr("approval.title"))
        self.body.setText(tr("approval.body", tool=f"<b>{title}</b>", action=f"<b>{req.action}</b>"))
        risk = tr("approval.risk", risk=tr(f"risk.{req.risk.value}"))
        origin_key = f"origin.{req.origin.value}"
        origin = tr("approval.origin", origin=tr(origin_key) if has(origin_key) else req.origin.value)
        self.risk.setText(
            f"<span style='color:{self._risk_color}; font-weight:600'>{risk}</span>&nbsp;&nbsp;·&nbsp;&nbsp;{origin}"
        )
        self.reason.setText(tr("approval.reason", reason=req.reason) if req.reason else "")
        self.arguments_title.setText(tr("approval.arguments"))
        self.deny_button.setText(tr("approval.deny"))
        self.session_button.setText(tr("approval.allow_session"))
        self.once_button.setText(tr("approval.allow_once"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

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
        dialog = ApprovalDialog(req, lambda: self._title(req.tool), self._parent)
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
