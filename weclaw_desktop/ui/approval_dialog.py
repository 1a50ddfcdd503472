"""The approval dialog and the GUI's :class:`ApprovalGate`.

The dialog is non-modal and awaited through an ``asyncio.Future`` (never ``exec()`` inside a
coroutine: that nests a Qt loop on qasync and hangs). Closing the dialog denies. If the turn is
cancelled while the dialog is open (Stop), the dialog closes and the cancellation propagates.

It cannot be clicked or typed through by accident (#13 item 4):

- it appears without taking keyboard focus (``WA_ShowWithoutActivating``; the gate never activates it),
  so what the user is typing keeps going to the composer; the window is alerted (taskbar/dock) and the
  call's card and the tool panel say it waits;
- Enter never approves: no allow button is a default button, Enter on one does nothing, and for high risk
  Deny is the default; the allow buttons are disarmed for :data:`ARM_MS` after the dialog appears, so a
  double-click meant for something else cannot land on them;
- it says what will happen in plain words (tools.json's summary, translated), why it asks (the chat read
  a web page, …), where the request came from, and shows every argument in full in a scrollable
  monospace box (runs of spaces counted, control characters escaped);
- "Always allow…" offers explicit scopes: this tool's action; this action in this folder; this MCP server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime

import shiboken6
from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeyEvent, QShowEvent
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from weclaw_desktop.i18n import language, pick, tr
from weclaw_desktop.toolkit.approval import (
    AllowRule,
    ApprovalDecision,
    ApprovalRequest,
    ApprovalResult,
    DecidedBy,
    Scope,
    scope_folder,
)
from weclaw_desktop.toolkit.approval_text import arguments_text, origin, why
from weclaw_desktop.toolkit.base import Risk
from weclaw_desktop.toolkit.registry import ToolRegistry
from weclaw_desktop.toolkit.summary import short_path
from weclaw_desktop.ui import icons, theme
from weclaw_desktop.ui.translation import mark_content

#: The allow buttons stay disabled this long after the dialog appears (no accidental click-through).
ARM_MS = 700
_ENTER_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter)


class ApprovalDialog(QDialog):
    def __init__(
        self,
        req: ApprovalRequest,
        title: str | Callable[[], str],
        parent: QWidget | None = None,
        *,
        arm_ms: int = ARM_MS,
    ) -> None:
        """``title``: the tool's display name, or a function giving it in the UI language."""
        super().__init__(parent)
        self.req = req
        self._title = title
        self.decision: ApprovalDecision | None = None
        self.remember: AllowRule | None = None
        self._callbacks: list[Callable[[ApprovalDecision], None]] = []
        self.setModal(False)
        self.setWindowModality(Qt.WindowModality.NonModal)
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating, True)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setMinimumWidth(520)
        self.setObjectName("ApprovalDialog")
        c = theme.colors()
        self._risk_color = {"high": c.danger, "medium": c.warning}.get(req.risk.value, c.accent)
        # asking because of untrusted content is a warning whatever the call's own risk
        self._alert_color = self._risk_color if req.risk is Risk.HIGH or not req.gated else c.warning
        layout = QVBoxLayout(self)
        layout.setContentsMargins(20, 18, 20, 16)
        layout.setSpacing(8)

        head = QHBoxLayout()
        head.setSpacing(12)
        glyph = QLabel()
        glyph.setPixmap(icons.pixmap("shield", 36, self._alert_color))
        glyph.setAlignment(Qt.AlignmentFlag.AlignTop)
        head.addWidget(glyph)
        text = QVBoxLayout()
        text.setSpacing(4)
        self.heading = QLabel()
        self.heading.setObjectName("Title")
        text.addWidget(self.heading)
        self.summary = QLabel()  # what will happen, in plain words
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        font = self.summary.font()
        font.setPointSizeF(font.pointSizeF() * 1.15)
        font.setBold(True)
        self.summary.setFont(font)
        mark_content(self.summary)
        text.addWidget(self.summary)
        self.body = QLabel()
        self.body.setTextFormat(Qt.TextFormat.RichText)
        self.body.setWordWrap(True)
        text.addWidget(self.body)
        self.risk = QLabel()
        self.risk.setTextFormat(Qt.TextFormat.RichText)
        self.risk.setWordWrap(True)
        text.addWidget(self.risk)
        head.addLayout(text, 1)
        layout.addLayout(head)

        self.why_title = QLabel()
        self.why_title.setObjectName("Section")
        layout.addWidget(self.why_title)
        self.reason = QLabel()
        self.reason.setWordWrap(True)
        self.reason.setTextFormat(Qt.TextFormat.PlainText)
        self.reason.setStyleSheet(f"color: {self._alert_color if req.gated else c.text};")
        mark_content(self.reason)
        layout.addWidget(self.reason)

        self.arguments_title = QLabel()
        self.arguments_title.setObjectName("Section")
        layout.addWidget(self.arguments_title)
        self.arguments = QPlainTextEdit(arguments_text(req.arguments))
        mark_content(self.arguments)
        self.arguments.setReadOnly(True)
        self.arguments.setFont(theme.mono_font())
        self.arguments.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.arguments.setMinimumHeight(110)
        self.arguments.setMaximumHeight(260)  # longer arguments scroll; nothing is cut
        # the keyboard, when the dialog gets it, lands here (read-only), never on a button: typing on
        # (spaces, Enter) cannot press one; Tab moves to the buttons on purpose
        self.arguments.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.arguments.setTabChangesFocus(True)
        layout.addWidget(self.arguments)
        self.function = QLabel(f"{req.function}")
        mark_content(self.function)
        self.function.setObjectName("Muted")
        layout.addWidget(self.function)

        buttons = QHBoxLayout()
        buttons.setSpacing(8)
        self.deny_button = QPushButton()
        self.session_button = QPushButton()
        self.always_button = QPushButton()
        self.once_button = QPushButton()
        # no allow button is the eye-catching one when the call is high risk or follows untrusted content
        self.once_button.setProperty("primary", req.risk is not Risk.HIGH and not req.gated)
        for button in (self.deny_button, self.session_button, self.always_button, self.once_button):
            button.setAutoDefault(False)
            button.setDefault(False)
            button.setFocusPolicy(Qt.FocusPolicy.TabFocus)  # a click does not move the keyboard here
        if req.risk is Risk.HIGH:
            self.deny_button.setDefault(True)  # Enter on a high-risk question means no
        self.always_menu = QMenu(self)
        self.always_actions: dict[Scope, QAction] = {}
        for scope in self._scopes():
            act = self.always_menu.addAction("")
            act.triggered.connect(lambda _checked=False, s=scope: self.decide_always(s))
            self.always_actions[scope] = act
        self.always_note = self.always_menu.addAction("")
        self.always_note.setEnabled(False)
        self.always_button.setMenu(self.always_menu)
        buttons.addWidget(self.deny_button)
        buttons.addStretch(1)
        buttons.addWidget(self.always_button)
        buttons.addWidget(self.session_button)
        buttons.addWidget(self.once_button)
        layout.addLayout(buttons)
        self.deny_button.clicked.connect(lambda: self.decide(ApprovalDecision.DENY))
        self.session_button.clicked.connect(lambda: self.decide(ApprovalDecision.ALLOW_SESSION))
        self.once_button.clicked.connect(lambda: self.decide(ApprovalDecision.ALLOW_ONCE))
        self._allow_buttons = (self.session_button, self.always_button, self.once_button)
        self.armed = arm_ms <= 0
        if not self.armed:
            for button in self._allow_buttons:
                button.setEnabled(False)
            QTimer.singleShot(arm_ms, self._arm)
        self.retranslate()

    def _scopes(self) -> list[Scope]:
        scopes: list[Scope] = ["function"]
        if self.req.paths:
            scopes.append("folder")
        if self.req.mcp_server:
            scopes.append("server")
        return scopes

    def _arm(self) -> None:
        if not shiboken6.isValid(self):
            return
        self.armed = True
        for button in self._allow_buttons:
            button.setEnabled(True)

    def retranslate(self) -> None:
        req = self.req
        lang = language()
        title = self._title() if callable(self._title) else self._title
        self.setWindowTitle(tr("approval.title"))
        self.heading.setText(tr("approval.title"))
        self.summary.setText(req.summary.get(lang) if req.summary is not None else f"{title} → {req.action}")
        self.body.setText(tr("approval.body", tool=f"<b>{title}</b>", action=f"<b>{req.action}</b>"))
        risk = tr("approval.risk", risk=tr(f"risk.{req.risk.value}"))
        self.risk.setText(
            f"<span style='color:{self._risk_color}; font-weight:600'>{risk}</span>&nbsp;&nbsp;·&nbsp;&nbsp;"
            + tr("approval.origin", origin=self._origin(lang))
        )
        reason = why(req, lang)
        self.why_title.setText(tr("approval.why_title"))
        self.reason.setText(
            reason or tr("approval.reason", reason=tr("approval.risk", risk=tr(f"risk.{req.risk.value}")))
        )
        self.arguments_title.setText(tr("approval.show_arguments"))
        self.deny_button.setText(tr("approval.deny.default") if req.risk is Risk.HIGH else tr("approval.deny"))
        self.session_button.setText(tr("approval.allow_session"))
        self.once_button.setText(tr("approval.allow_once"))
        self.always_button.setText(tr("approval.allow_always"))
        for scope, act in self.always_actions.items():
            act.setText(self._scope_text(scope, title))
        self.always_note.setText(tr("approval.always.untrusted_note"))

    def _origin(self, lang: str) -> str:
        where = origin(self.req, lang)
        sources = [s for s in self.req.sources if s.label is not None]
        if sources and sources[-1].label is not None:
            return tr("approval.from.after", origin=where, source=sources[-1].label.get(lang))
        return tr("approval.from.text", origin=where)

    def _scope_text(self, scope: Scope, title: str) -> str:
        if scope == "folder":
            return tr(
                "approval.always.folder", tool=title, action=self.req.action, folder=short_path(scope_folder(self.req))
            )
        if scope == "server":
            return tr("approval.always.server", server=self.req.mcp_server)
        return tr("approval.always.function", tool=title, action=self.req.action)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.arguments.setFocus(Qt.FocusReason.OtherFocusReason)  # not the default button

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Enter never approves: on a high-risk question it denies, otherwise it does nothing."""
        if event.key() in _ENTER_KEYS:
            if self.req.risk is Risk.HIGH:
                self.decide(ApprovalDecision.DENY)
            event.accept()
            return
        super().keyPressEvent(event)

    def on_decided(self, callback: Callable[[ApprovalDecision], None]) -> None:
        self._callbacks.append(callback)

    def decide(self, decision: ApprovalDecision) -> None:
        if self.decision is not None:
            return
        if decision.allowed and not self.armed:
            return  # too soon after it appeared to be a considered answer
        self.decision = decision
        for callback in self._callbacks:
            callback(decision)
        self.close()

    def decide_always(self, scope: Scope) -> None:
        req = self.req
        self.remember = AllowRule(
            scope=scope,
            tool=req.tool,
            function="" if scope == "server" else req.function,
            folder=scope_folder(req) if scope == "folder" else "",
            created=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        self.decide(ApprovalDecision.ALLOW_ALWAYS)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.decision is None:
            self.armed = True  # closing is always a "no"
            self.decide(ApprovalDecision.DENY)
        super().closeEvent(event)


class QtApprovalGate:
    """Asks the user with a non-modal :class:`ApprovalDialog` and awaits the answer. The dialog is shown
    without taking the keyboard; the window is alerted so the user notices it."""

    def __init__(self, parent: QWidget | None, registry: ToolRegistry, *, arm_ms: int = ARM_MS) -> None:
        self._parent = parent
        self._registry = registry
        self.arm_ms = arm_ms
        self.open_dialogs: list[ApprovalDialog] = []
        self.listeners: list[Callable[[ApprovalDialog], None]] = []  # tests and the window hook in here

    def _title(self, tool: str) -> str:
        return pick(self._registry.spec(tool).display.name) if self._registry.has_tool(tool) else tool

    async def request(self, req: ApprovalRequest) -> ApprovalResult:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[ApprovalDecision] = loop.create_future()
        dialog = ApprovalDialog(req, lambda: self._title(req.tool), self._parent, arm_ms=self.arm_ms)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)

        chosen: dict[str, AllowRule | None] = {}

        def decided(decision: ApprovalDecision) -> None:
            chosen["remember"] = dialog.remember  # read now: the dialog is deleted once it closes
            if not future.done():
                future.set_result(decision)

        dialog.on_decided(decided)
        self.open_dialogs.append(dialog)
        dialog.show()  # shown, not activated: the keyboard stays where the user is typing
        dialog.raise_()
        if self._parent is not None:
            QApplication.alert(self._parent.window(), 0)
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
        remember = chosen.get("remember") if decision is ApprovalDecision.ALLOW_ALWAYS else None
        return ApprovalResult(decision, decided_by=DecidedBy.USER, note=note, remember=remember)
