"""The first-run panel shown in the chat area while no model provider is set up, and the welcome
shown in an empty chat."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QLabel, QPushButton, QVBoxLayout, QWidget

from weclaw_desktop.ui import icons, theme
from weclaw_desktop.ui.i18n import tr


class SetupPanel(QWidget):
    open_settings = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        outer = QVBoxLayout(self)
        outer.addStretch(1)
        card = QFrame()
        card.setObjectName("SetupPanel")
        card.setMaximumWidth(560)
        layout = QVBoxLayout(card)
        layout.setContentsMargins(32, 28, 32, 28)
        layout.setSpacing(14)
        logo = QLabel()
        logo.setPixmap(icons.pixmap("app", 56, theme.colors().accent))
        logo.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(logo)
        title = QLabel(tr("setup.title"))
        title.setObjectName("Title")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(title)
        body = QLabel(tr("setup.body"))
        body.setWordWrap(True)
        body.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(body)
        self.button = QPushButton(icons.icon("settings", "#ffffff"), tr("setup.open"))
        self.button.setProperty("primary", True)
        self.button.clicked.connect(self.open_settings)
        layout.addWidget(self.button, 0, Qt.AlignmentFlag.AlignCenter)
        rest = QLabel(tr("setup.rest"))
        rest.setObjectName("Muted")
        rest.setWordWrap(True)
        rest.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(rest)
        outer.addWidget(card, 0, Qt.AlignmentFlag.AlignHCenter)
        outer.addStretch(2)


class WelcomePanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        logo = QLabel()
        logo.setPixmap(icons.pixmap("app", 48, theme.colors().accent))
        logo.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(logo)
        title = QLabel(tr("chat.welcome"))
        title.setObjectName("Title")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(title)
        sub = QLabel(tr("chat.welcome.sub"))
        sub.setObjectName("Muted")
        sub.setWordWrap(True)
        sub.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(sub)
        layout.addStretch(2)
