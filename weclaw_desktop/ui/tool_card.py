"""An inline card for one tool call: tool and action (display names from tools.json), folded arguments,
status with the running time apart from the approval wait, progress, what happened in the user's words
(denied by you / by a rule, switched off, not offered, stopped, interrupted), a preview of the result
(monospace for tools that print code or command output) with "Show full output", and the files it
produced with "Open", "Show in folder" and "Send to phone" — and a visible line when opening fails.

A card is made from a :class:`CallItem` and may be destroyed and made again, or *rebound* to another
call (the chat keeps only the widgets near the screen and recycles a few dropped cards: :meth:`bind`): the
folds and the last failure message live on the item, never on the card. Colours come from the theme's
style sheet (object names) and the widgets' palettes (:func:`theme.tint`), not from per-widget style sheets:
those make every card cost several milliseconds more.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QFont, QResizeEvent
from PySide6.QtWidgets import (
    QBoxLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from weclaw_desktop.i18n import Text, tr
from weclaw_desktop.toolkit.registry import ToolRegistry
from weclaw_desktop.ui import icons, theme
from weclaw_desktop.ui.arguments import readable_arguments
from weclaw_desktop.ui.call_text import TOOL_WORDS, action_name, call_status_text, outcome_key, tool_name
from weclaw_desktop.ui.chat.items import CallItem
from weclaw_desktop.ui.chat.markdown_view import content_resized
from weclaw_desktop.ui.tool_board import CallInfo
from weclaw_desktop.ui.translation import mark_content

PREVIEW_CHARS = 360
PREVIEW_LINES = 8
FULL_OUTPUT_HEIGHT = 360

#: ``report(text)`` shows a line on the card (e.g. why a file could not be opened).
Report = Callable[[Text], None]


@dataclass
class CardActions:
    """What the buttons of a card do; the window provides them. ``open_path``/``reveal_path`` call
    ``report`` when the system could not do it. ``send_to_phone`` is None until a phone link is running
    (the companion plugs it in), and the button says how to get one."""

    open_path: Callable[[Path, Report], None]
    reveal_path: Callable[[Path, Report], None]
    send_to_phone: Callable[[list[Path]], None] | None = None


def result_text(call: CallInfo) -> str:
    """What the card shows of a result: the tool's own words. The model's copy also carries the
    structured data as one JSON line ("data: {...}") and the produced files ("files: ..."); the card
    leaves those out (the files have their own rows with buttons)."""
    if call.status != "success" and call.error:
        return call.error
    kept = [
        line
        for line in call.output.splitlines()
        if not (line.startswith("data: {") or line.startswith("data: [") or (call.files and line.startswith("files: ")))
    ]
    return "\n".join(kept)


def preview(text: str) -> tuple[str, bool]:
    """The first lines of ``text`` and whether anything was left out."""
    text = text.strip()
    lines = text.splitlines()
    cut = False
    if len(lines) > PREVIEW_LINES:
        more = len(lines) - PREVIEW_LINES
        text = "\n".join(lines[:PREVIEW_LINES]) + "\n" + tr("card.more_lines", n=more)
        cut = True
    if len(text) <= PREVIEW_CHARS:
        return text, cut
    return text[:PREVIEW_CHARS].rstrip() + " …", True


class ElidedLabel(QLabel):
    """One line of plain text cut with "…" to the width it gets (the whole text is the tooltip)."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)  # shrinks to its minimum
        self.setText(text)

    def setText(self, text: str) -> None:
        self._full = text
        self._elide()

    def full_text(self) -> str:
        return self._full

    def _elide(self) -> None:
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideMiddle, max(10, self.width()))
        super().setText(shown)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def sizeHint(self) -> QSize:
        return QSize(self.fontMetrics().horizontalAdvance(self._full) + 4, super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:
        return QSize(min(60, self.sizeHint().width()), super().minimumSizeHint().height())


class FileRow(QWidget):
    """A produced file: its name, then its buttons beside it — or under it when the card is too narrow.
    A card keeps its rows when it is rebound: ``path`` is the file shown now (the buttons act on it)."""

    NAME_ROOM = 160  # px the name keeps before the buttons move under it

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = Path()
        self.box = QBoxLayout(QBoxLayout.Direction.LeftToRight, self)
        self.box.setContentsMargins(0, 0, 0, 0)
        self.box.setSpacing(6)
        self.name_box = QHBoxLayout()
        self.name_box.setSpacing(6)
        self.glyph = QLabel()
        self.glyph.setPixmap(icons.pixmap("document", 16, theme.colors().muted))
        self.name_box.addWidget(self.glyph)
        self.name = ElidedLabel()
        mark_content(self.name)
        self.name_box.addWidget(self.name, 1)
        self.buttons = QHBoxLayout()
        self.buttons.setSpacing(4)
        self.box.addLayout(self.name_box, 1)
        self.box.addLayout(self.buttons)

    def _fit(self, width: int) -> None:
        narrow = width < self.NAME_ROOM + self.buttons.sizeHint().width()
        direction = QBoxLayout.Direction.TopToBottom if narrow else QBoxLayout.Direction.LeftToRight
        if self.box.direction() != direction:
            self.box.setDirection(direction)
            self.updateGeometry()
            content_resized(self)  # the card is taller or shorter now

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._fit(event.size().width())
        super().resizeEvent(event)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        self._fit(width)
        return self.box.totalHeightForWidth(width) if self.box.hasHeightForWidth() else self.box.sizeHint().height()

    def minimumSizeHint(self) -> QSize:
        return QSize(max(self.NAME_ROOM // 2, self.buttons.minimumSize().width()), super().minimumSizeHint().height())


class ToolCallCard(QFrame):
    def __init__(
        self,
        call: CallInfo,
        registry: ToolRegistry,
        actions: CardActions,
        parent: QWidget | None = None,
        *,
        item: CallItem | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("ToolCard")
        self.item = item or CallItem(call=call)
        self.call = self.item.call
        self._actions = actions
        self._registry = registry
        self._icon_name = "tool"
        self._mono = False
        policy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(12, 9, 12, 9)
        outer.setSpacing(6)

        header = QHBoxLayout()
        header.setSpacing(8)
        self.icon = QLabel()
        header.addWidget(self.icon)
        self.title = ElidedLabel()  # "Shell · Run command", cut with … on a narrow chat
        bold = self.title.font()
        bold.setBold(True)
        self.title.setFont(bold)
        header.addWidget(self.title)
        self.action_label = ElidedLabel()
        header.addWidget(self.action_label, 1)
        self.toggle = QToolButton()
        self.toggle.setCheckable(True)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setAutoRaise(True)
        header.addWidget(self.toggle)
        outer.addLayout(header)
        # the status has its own line: "Succeeded · 4.0 s · waited 44.8 s for approval" fits a narrow chat
        status_row = QHBoxLayout()
        status_row.setSpacing(6)
        self.status_icon = QLabel()
        status_row.addWidget(self.status_icon, 0, Qt.AlignmentFlag.AlignTop)
        self.status = QLabel()
        self.status.setWordWrap(True)
        status_row.addWidget(self.status, 1)
        outer.addLayout(status_row)

        self._outer = outer
        # the parts most cards never show are made when first needed (a card is made while scrolling)
        self._arguments: QLabel | None = None
        self._progress: QProgressBar | None = None
        self._full: QPlainTextEdit | None = None
        self._feedback: QLabel | None = None

        self.why = QLabel()  # what happened, in the user's words
        self.why.setWordWrap(True)
        self.why.setVisible(False)
        outer.addWidget(self.why)

        self.result = QLabel()
        mark_content(self.result)  # the tool's own words (its output for the model)
        self.result.setWordWrap(True)
        self.result.setTextFormat(Qt.TextFormat.PlainText)
        self.result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.result.setVisible(False)
        outer.addWidget(self.result)
        self.more = QPushButton()
        self.more.setObjectName("ShowFullOutput")
        self.more.setProperty("flat", True)
        self.more.setVisible(False)
        self.more.clicked.connect(self._toggle_full)
        more_row = QHBoxLayout()
        more_row.addWidget(self.more)
        more_row.addStretch(1)
        outer.addLayout(more_row)

        self.files_box = QVBoxLayout()
        self.files_box.setSpacing(4)
        outer.addLayout(self.files_box)
        self._file_rows: list[FileRow] = []  # kept when rebound; the first len(call.files) are shown
        self._file_buttons: list[tuple[QPushButton, str]] = []  # (button, text key)
        self.toggle.toggled.connect(self._toggle_arguments)
        self.bind(self.item)

    # --- recycling (the chat rebinds a few dropped cards: making one costs milliseconds) ------------
    def bind(self, item: CallItem) -> None:
        """Show ``item``'s call in this card, made just now or dropped from another call: every part is set
        from the item (its folds, its failure line), nothing of the previous call stays."""
        self.item = item
        call = self.call = item.call
        registry = self._registry
        spec = registry.spec(call.tool) if call.tool and registry.has_tool(call.tool) else None
        self._icon_name = spec.display.icon if spec is not None else "tool"
        mono = bool(spec is not None and spec.display.monospace)
        if mono != self._mono:
            self._mono = mono
            font = theme.mono_font() if mono else QFont()  # QFont(): the inherited font again
            self.result.setFont(font)
            if self._full is not None:
                self._full.setFont(font)
        if self._arguments is not None:
            self._arguments.setText(readable_arguments(call.arguments))
        if self._full is not None:
            self._full.clear()  # the old call's whole output is not kept (update_from shows the new one's)
        if self._feedback is not None:
            self._feedback.clear()
            self._feedback.setVisible(False)
        self.toggle.blockSignals(True)
        self.toggle.setChecked(item.expanded)
        self.toggle.blockSignals(False)
        self._toggle_arguments(item.expanded)
        self.restyle()
        self.retranslate()

    # --- parts made on first use ---------------------------------------------------------------
    @property
    def arguments(self) -> QLabel:
        if self._arguments is None:
            label = QLabel(readable_arguments(self.call.arguments))
            mark_content(label)
            label.setFont(theme.mono_font())
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            label.setWordWrap(True)
            label.setVisible(False)
            label.setObjectName("CardArguments")  # the code background: a rule of the theme's style sheet
            self._outer.insertWidget(1, label)
            self._arguments = label
        return self._arguments

    @property
    def progress(self) -> QProgressBar:
        if self._progress is None:
            bar = QProgressBar()
            bar.setRange(0, 1000)
            bar.setTextVisible(False)
            bar.setVisible(False)
            self._outer.insertWidget(2 if self._arguments is not None else 1, bar)
            self._progress = bar
        return self._progress

    @property
    def full(self) -> QPlainTextEdit:
        if self._full is None:
            edit = QPlainTextEdit()
            mark_content(edit)
            edit.setReadOnly(True)
            edit.setFont(theme.mono_font() if self._mono else self.font())
            edit.setMaximumHeight(FULL_OUTPUT_HEIGHT)
            edit.setVisible(False)
            edit.setObjectName("CardFullOutput")
            self._outer.insertWidget(self._outer.indexOf(self.result) + 1, edit)
            self._full = edit
        return self._full

    @property
    def feedback(self) -> QLabel:
        if self._feedback is None:
            label = QLabel()  # "Could not open …"
            label.setObjectName("CardFeedback")
            label.setWordWrap(True)
            theme.tint(label, theme.colors().danger)
            self._outer.addWidget(label)
            self._feedback = label
        return self._feedback

    # --- theme and language ---------------------------------------------------------------------
    def restyle(self) -> None:
        c = theme.colors()
        self.icon.setPixmap(icons.pixmap(self._icon_name, 18, c.accent))
        for row in self._file_rows:
            row.glyph.setPixmap(icons.pixmap("document", 16, c.muted))

    def retranslate(self) -> None:
        call = self.call
        c = theme.colors()
        action = action_name(self._registry, call.tool, call.action)
        self.title.setText(tool_name(self._registry, call))
        self.action_label.setText(f"· {action}")
        theme.tint(self.action_label, c.muted)
        self.title.setToolTip(f"{call.function}" if call.function else "")
        self.toggle.setText(tr("card.arguments"))
        for button, key in self._file_buttons:
            button.setText(tr(key))
        feedback = self.item.data.get("feedback")
        if isinstance(feedback, Text):
            self.feedback.setText(str(feedback))
            self.feedback.setVisible(True)
        self.update_from(call)
        self.refresh_phone()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    # --- folds ------------------------------------------------------------------------------------
    def _toggle_arguments(self, shown: bool) -> None:
        self.item.expanded = shown
        if shown or self._arguments is not None:
            self.arguments.setVisible(shown)
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        content_resized(self)

    def _toggle_full(self) -> None:
        self.item.full_output = not self.item.full_output
        self.update_from(self.call)
        content_resized(self)

    # --- state ------------------------------------------------------------------------------------
    def update_from(self, call: CallInfo) -> None:
        self.call = call
        self.item.call = call
        color = theme.status_color(call.status)
        self.status_icon.setPixmap(icons.status_icon(call.status))
        self.status.setText(call_status_text(call))
        theme.tint(self.status, color)
        running = call.status == "running"
        if running or self._progress is not None:
            self.progress.setVisible(running)
            if call.fraction is not None:
                self.progress.setRange(0, 1000)
                self.progress.setValue(round(max(0.0, min(1.0, call.fraction)) * 1000))
            elif running:
                self.progress.setRange(0, 0)  # busy: the tool reports no fraction
        key = outcome_key(call)
        c = theme.colors()
        if call.status == "awaiting_approval":
            self._set_why(tr("card.approve_hint"), c.warning)
            self._show_result("", False)
        elif call.finished:
            self._set_why(tr(key) if key else "", c.danger if call.status in ("error", "timeout") else c.warning)
            words = key is None or call.status in TOOL_WORDS
            self._show_result(result_text(call) if words else "", call.status in ("error", "timeout"))
            self._show_files([Path(f) for f in call.files])
        else:
            self._set_why("", None)
            self._show_result("", False)
            self._show_files([])
        content_resized(self)

    def _set_why(self, text: str, color: str | None) -> None:
        self.why.setText(text)
        theme.tint(self.why, color or theme.colors().muted)
        self.why.setVisible(bool(text))

    def _show_result(self, text: str, failed: bool) -> None:
        c = theme.colors()
        short, cut = preview(text)
        full = self.item.full_output and cut
        self.result.setText(short)
        theme.tint(self.result, c.danger if failed else c.muted)
        self.result.setVisible(bool(short) and not full)
        if full and self.full.toPlainText() != text.strip():
            self.full.setPlainText(text.strip())
        if full or self._full is not None:
            self.full.setVisible(full)
        self.more.setVisible(cut)
        self.more.setText(tr("card.show_less") if full else tr("card.show_full"))
        truncated = self.call.truncated and full
        self.more.setToolTip(tr("card.truncated") if truncated else "")

    def _show_files(self, paths: list[Path]) -> None:
        """One row per produced file (rows of an earlier call are reused, the extra ones hidden)."""
        while len(self._file_rows) < len(paths):
            self._file_rows.append(self._new_file_row())
        for row, path in zip(self._file_rows, paths, strict=False):
            row.path = path
            row.name.setText(path.name)
            row.name.setToolTip(str(path))
            row.setVisible(True)
        for row in self._file_rows[len(paths) :]:
            row.setVisible(False)
        if paths:
            self.refresh_phone()

    def _new_file_row(self) -> FileRow:
        row = FileRow()
        layout = row.buttons
        for key, name, act in (
            ("card.open", "OpenFile", lambda: self._actions.open_path(row.path, self.item_report())),
            ("card.reveal", "RevealFile", lambda: self._actions.reveal_path(row.path, self.item_report())),
            ("card.send_phone", "SendToPhone", lambda: self._send(row.path)),
        ):
            button = QPushButton(tr(key))
            if name == "SendToPhone":
                button.setIcon(icons.icon("phone"))
            self._file_buttons.append((button, key))
            button.setObjectName(name)
            button.setProperty("flat", True)
            button.clicked.connect(lambda _=False, act=act: act())
            layout.addWidget(button)
        layout.addStretch(1)
        self.files_box.addWidget(row)
        return row

    def item_report(self) -> Report:
        """A ``report`` that reaches this card's item (and its widget, if it is still shown)."""
        item = self.item
        card = self

        def report(text: Text) -> None:
            item.data["feedback"] = text
            from shiboken6 import isValid

            if isValid(card) and card.item is item:
                card.feedback.setText(str(text))
                card.feedback.setVisible(True)
                content_resized(card)

        return report

    def refresh_phone(self) -> None:
        enabled = self._actions.send_to_phone is not None
        for button in self.findChildren(QPushButton, "SendToPhone"):
            button.setEnabled(enabled)
            button.setToolTip("" if enabled else tr("card.send_phone.unpaired"))

    def _send(self, path: Path) -> None:
        if self._actions.send_to_phone is not None:
            self._actions.send_to_phone([path])
