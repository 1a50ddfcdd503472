"""Attachment chips: one per file of a message, in the composer (removable, "Reading…" until the file is
read) and on a sent message (read-only). A chip shows the file name, its size, a "truncated" mark when only
part of the text goes to the model, and why a file's content is not included; an image chip shows a thumbnail.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QLayout, QSizePolicy, QToolButton, QWidget

from weclaw_desktop.attachments import Attachment
from weclaw_desktop.attachments.compose import size_text
from weclaw_desktop.i18n import tr
from weclaw_desktop.ui import icons, theme

THUMB = 28
NAME_WIDTH = 170  # px of the file name; longer names are shortened in the middle ("budget…2026.csv")


class AttachmentChip(QFrame):
    """``removed(chip)`` when the user takes it off again (composer chips only)."""

    removed = Signal(object)

    def __init__(self, name: str, *, removable: bool = True, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("AttachmentChip")
        self.name = name
        self.attachment: Attachment | None = None
        self.source = ""  # the file it was made from ('' for a pasted image)
        self.error = ""
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 2 if removable else 8, 2)
        layout.setSpacing(6)
        self.thumb = QLabel()
        self.thumb.setFixedSize(QSize(THUMB, THUMB))
        self.thumb.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(self.thumb)
        self.label = QLabel()
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(self.label)
        self.mark = QLabel()
        self.mark.setObjectName("ChipMark")
        layout.addWidget(self.mark)
        self.close_button: QToolButton | None = None
        if removable:
            self.close_button = QToolButton()
            self.close_button.setText("✕")
            self.close_button.setAutoRaise(True)
            self.close_button.clicked.connect(lambda: self.removed.emit(self))
            layout.addWidget(self.close_button)
        self.retranslate()

    # --- state ----------------------------------------------------------------------------------
    @classmethod
    def of(cls, attachment: Attachment, *, removable: bool = False) -> AttachmentChip:
        chip = cls(attachment.name, removable=removable)
        chip.set_attachment(attachment)
        return chip

    @property
    def ready(self) -> bool:
        return self.attachment is not None

    def set_attachment(self, attachment: Attachment) -> None:
        self.attachment = attachment
        self.error = ""
        self.retranslate()

    def set_error(self, message: str) -> None:
        self.error = message
        self.retranslate()

    def retranslate(self) -> None:
        c = theme.colors()
        att = self.attachment
        if self.close_button is not None:
            self.close_button.setToolTip(tr("chat.remove_attachment"))
        if self.error:
            self.label.setText(self._short(self.name))
            self.mark.setText(tr("attach.failed"))
            self.mark.setStyleSheet(f"color:{c.danger};")
            self.setToolTip(self.error)
            self.thumb.setPixmap(icons.pixmap("status_error", 16, c.danger))
            return
        if att is None:
            self.label.setText(self._short(self.name))
            self.mark.setText(tr("attach.reading"))
            self.mark.setStyleSheet(f"color:{c.muted};")
            self.setToolTip(self.name)
            self.thumb.setPixmap(icons.pixmap("paperclip", 16, c.muted))
            return
        self.label.setText(f"{self._short(att.name)} · {shown_size(att.size)}")
        lines = [att.name, att.path]
        if att.kind == "image":
            self.mark.setText("")
            pix = QPixmap(att.path)
            if not pix.isNull():
                self.thumb.setPixmap(
                    pix.scaled(
                        THUMB, THUMB, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
                    )
                )
            lines.append(tr("attach.image_tip"))
        elif att.kind == "text":
            self.thumb.setPixmap(icons.pixmap("document", 16, c.text))
            if att.truncated:
                self.mark.setText(tr("attach.truncated"))
                self.mark.setStyleSheet(f"color:{c.warning};")
                lines.append(tr("attach.truncated_tip", shown=f"{len(att.text):,}", total=f"{att.chars:,}"))
            else:
                self.mark.setText("")
                lines.append(tr("attach.text_tip", n=att.chars))
        else:
            self.thumb.setPixmap(icons.pixmap("document", 16, c.muted))
            self.mark.setText(tr("attach.not_read"))
            self.mark.setStyleSheet(f"color:{c.muted};")
            lines.append(tr("attach.not_read_tip", reason=att.note or "-"))
        if att.note and att.kind == "text":
            lines.append(att.note)
        self.setToolTip("\n".join(lines))

    def _short(self, name: str) -> str:
        return self.label.fontMetrics().elidedText(name, Qt.TextElideMode.ElideMiddle, NAME_WIDTH)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)


class ChipRow(QWidget):
    """A wrapping row of chips (a sent message's attachments)."""

    def __init__(self, attachments: list[Attachment], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ChipRow")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.setSpacing(6)
        layout.setSizeConstraint(QLayout.SizeConstraint.SetMinimumSize)
        self.chips = [AttachmentChip.of(a) for a in attachments]
        for chip in self.chips:
            layout.addWidget(chip)
        layout.addStretch(1)


def shown_size(n: int) -> str:
    """A size for people: "1.2 MB", "34 KB", "12 bytes" / "12 字节"."""
    return size_text(n) if n >= 1024 else tr("unit.bytes", n=n)


def display_path(path: str) -> str:
    """``~/Documents/x.csv`` for a path under the home folder."""
    p = Path(path)
    try:
        return "~/" + str(p.relative_to(Path.home()))
    except ValueError:
        return str(p)
