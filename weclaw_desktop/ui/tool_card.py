"""An inline card for one tool call: tool and action, folded arguments, status, duration, progress,
a preview of the result, and the files it produced with "Open" and "Send to phone" buttons."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from weclaw_desktop.i18n import pick, tr
from weclaw_desktop.toolkit.registry import ToolRegistry
from weclaw_desktop.ui import icons, theme
from weclaw_desktop.ui.arguments import readable_arguments
from weclaw_desktop.ui.tool_board import CallInfo
from weclaw_desktop.ui.tool_panel import call_status_text
from weclaw_desktop.ui.translation import mark_content

PREVIEW_CHARS = 360
PREVIEW_LINES = 8


@dataclass
class CardActions:
    """What the buttons of a card do; the window provides them. ``send_to_phone`` is None until a
    phone link is running (the companion plugs it in), and the button says how to get one."""

    open_path: Callable[[Path], None]
    reveal_path: Callable[[Path], None]
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


def _preview(text: str) -> str:
    text = text.strip()
    lines = text.splitlines()
    if len(lines) > PREVIEW_LINES:
        more = len(lines) - PREVIEW_LINES
        text = "\n".join(lines[:PREVIEW_LINES]) + "\n" + tr("card.more_lines", n=more)
    if len(text) <= PREVIEW_CHARS:
        return text
    return text[:PREVIEW_CHARS].rstrip() + " …"


class ToolCallCard(QFrame):
    def __init__(self, call: CallInfo, registry: ToolRegistry, actions: CardActions, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("ToolCard")
        self.call = call
        self._actions = actions
        self._registry = registry
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(12, 9, 12, 9)
        outer.setSpacing(6)

        header = QHBoxLayout()
        header.setSpacing(8)
        icon_name = "tool"
        if call.tool and registry.has_tool(call.tool):
            icon_name = registry.spec(call.tool).display.icon
        self.icon = QLabel()
        self.icon.setPixmap(icons.pixmap(icon_name, 18, theme.colors().accent))
        header.addWidget(self.icon)
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.RichText)
        header.addWidget(self.title)
        header.addStretch(1)
        self.status_icon = QLabel()
        header.addWidget(self.status_icon)
        self.status = QLabel()
        header.addWidget(self.status)
        self.toggle = QToolButton()
        self.toggle.setCheckable(True)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setAutoRaise(True)
        self.toggle.toggled.connect(self._toggle_arguments)
        header.addWidget(self.toggle)
        outer.addLayout(header)

        self.arguments = QLabel(readable_arguments(call.arguments))
        mark_content(self.arguments)
        self.arguments.setFont(theme.mono_font())
        self.arguments.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.arguments.setWordWrap(True)
        self.arguments.setStyleSheet(
            f"background:{theme.colors().code_bg}; border-radius:6px; padding:8px; color:{theme.colors().text};"
        )
        self.arguments.setVisible(False)
        outer.addWidget(self.arguments)

        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setVisible(False)
        outer.addWidget(self.progress)

        self.result = QLabel()
        mark_content(self.result)  # the tool's own words (its output for the model)
        self.result.setWordWrap(True)
        self.result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.result.setVisible(False)
        outer.addWidget(self.result)

        self.files_box = QVBoxLayout()
        self.files_box.setSpacing(4)
        outer.addLayout(self.files_box)
        self._file_rows: list[QWidget] = []
        self._file_buttons: list[tuple[QPushButton, str]] = []  # (button, text key)
        self.retranslate()

    def retranslate(self) -> None:
        call = self.call
        title = call.function or "?"
        if call.tool and self._registry.has_tool(call.tool):
            title = pick(self._registry.spec(call.tool).display.name)
        self.title.setText(f"<b>{title}</b> <span style='color:{theme.colors().muted}'>· {call.action}</span>")
        self.toggle.setText(tr("card.arguments"))
        for button, key in self._file_buttons:
            button.setText(tr(key))
        self.update_from(call)
        self.refresh_phone()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def _toggle_arguments(self, shown: bool) -> None:
        self.arguments.setVisible(shown)
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)

    def update_from(self, call: CallInfo) -> None:
        self.call = call
        color = theme.status_color(call.status)
        self.status_icon.setPixmap(icons.status_icon(call.status))
        self.status.setText(call_status_text(call))
        self.status.setStyleSheet(f"color:{color};")
        running = call.status == "running"
        self.progress.setVisible(running)
        if call.fraction is not None:
            self.progress.setRange(0, 1000)
            self.progress.setValue(round(max(0.0, min(1.0, call.fraction)) * 1000))
        elif running:
            self.progress.setRange(0, 0)  # busy: the tool reports no fraction
        if call.status == "awaiting_approval":
            self._set_result(tr("card.approve_hint"), theme.colors().warning)
        elif call.finished:
            self._set_result(
                _preview(result_text(call)), theme.colors().danger if call.status in ("error", "timeout") else None
            )
            if call.files and not self._file_rows:
                self._add_files([Path(f) for f in call.files])
        else:
            self.result.setVisible(False)

    def _set_result(self, text: str, color: str | None) -> None:
        self.result.setText(text)
        self.result.setStyleSheet(f"color:{color or theme.colors().muted};")
        self.result.setVisible(bool(text))

    def _add_files(self, paths: list[Path]) -> None:
        for path in paths:
            row = QWidget()
            layout = QHBoxLayout(row)
            layout.setContentsMargins(0, 0, 0, 0)
            layout.setSpacing(6)
            glyph = QLabel()
            glyph.setPixmap(icons.pixmap("document", 16, theme.colors().muted))
            layout.addWidget(glyph)
            name = QLabel(path.name)
            mark_content(name)
            name.setToolTip(str(path))
            layout.addWidget(name, 1)
            open_button = QPushButton(tr("card.open"))
            self._file_buttons.append((open_button, "card.open"))
            open_button.setProperty("flat", True)
            open_button.clicked.connect(lambda _=False, p=path: self._actions.open_path(p))
            layout.addWidget(open_button)
            reveal = QPushButton(tr("card.reveal"))
            self._file_buttons.append((reveal, "card.reveal"))
            reveal.setProperty("flat", True)
            reveal.clicked.connect(lambda _=False, p=path: self._actions.reveal_path(p))
            layout.addWidget(reveal)
            phone = QPushButton(icons.icon("phone"), tr("card.send_phone"))
            self._file_buttons.append((phone, "card.send_phone"))
            phone.setObjectName("SendToPhone")
            phone.setProperty("flat", True)
            phone.clicked.connect(lambda _=False, p=path: self._send(p))
            layout.addWidget(phone)
            self.files_box.addWidget(row)
            self._file_rows.append(row)
        self.refresh_phone()

    def refresh_phone(self) -> None:
        enabled = self._actions.send_to_phone is not None
        for button in self.findChildren(QPushButton, "SendToPhone"):
            button.setEnabled(enabled)
            button.setToolTip("" if enabled else tr("card.send_phone.unpaired"))

    def _send(self, path: Path) -> None:
        if self._actions.send_to_phone is not None:
            self._actions.send_to_phone([path])
