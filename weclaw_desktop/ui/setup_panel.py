"""The first-run panel shown in the chat area while no model provider is set up, and the welcome
shown in an empty chat."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import QFrame, QLabel, QPushButton, QVBoxLayout, QWidget

from weclaw_desktop.i18n import tr
from weclaw_desktop.ui import icons


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
        icons.bind(logo, "app", "accent", size=56)
        logo.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(logo)
        self.title = QLabel()
        self.title.setObjectName("Title")
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(self.title)
        self.body = QLabel()
        self.body.setWordWrap(True)
        self.body.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(self.body)
        self.button = QPushButton()
        icons.bind(self.button, "settings", "#ffffff")
        self.button.setProperty("primary", True)
        self.button.clicked.connect(self.open_settings)
        layout.addWidget(self.button, 0, Qt.AlignmentFlag.AlignCenter)
        self.rest = QLabel()
        self.rest.setObjectName("Muted")
        self.rest.setWordWrap(True)
        self.rest.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(self.rest)
        outer.addWidget(card, 0, Qt.AlignmentFlag.AlignHCenter)
        outer.addStretch(2)
        self.retranslate()

    def retranslate(self) -> None:
        self.title.setText(tr("setup.title"))
        self.body.setText(tr("setup.body"))
        self.button.setText(tr("setup.open"))
        self.rest.setText(tr("setup.rest"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)


class WelcomePanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        logo = QLabel()
        icons.bind(logo, "app", "accent", size=48)
        logo.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(logo)
        self.title = QLabel()
        self.title.setObjectName("Title")
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(self.title)
        self.sub = QLabel()
        self.sub.setObjectName("Muted")
        self.sub.setWordWrap(True)
        self.sub.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(self.sub)
        layout.addStretch(2)
        self.retranslate()

    def retranslate(self) -> None:
        self.title.setText(tr("chat.welcome"))
        self.sub.setText(tr("chat.welcome.sub"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)
