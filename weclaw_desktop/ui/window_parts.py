"""Parts of the main window's layout: the banner shown without a system keyring, and the rule that keeps
the sidebar, the chat and the tool panel from crushing each other on a narrow window.

- :class:`KeyringBanner`: without a usable keyring, keys typed in Settings live only until WeClaw closes; the
  banner says so above the chat, with what to install on this system, until a keyring works.
- :class:`PanelFitter`: the chat keeps at least :data:`CHAT_MIN` px. When the window is too narrow for the
  sidebar and the tool panel as well, the panel the user did not just ask for is folded away (the tool
  panel first), and comes back by itself when the window is wide enough again. What the user folds stays
  folded. So the window can be as narrow as :data:`MIN_WIDTH` (half of a 1366 px screen) with nothing clipped.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from weclaw_desktop.i18n import tr
from weclaw_desktop.secrets import SecretStore

CHAT_MIN = 380
SIDEBAR_MIN = 180
PANEL_MIN = 260
MIN_WIDTH = 640
MIN_HEIGHT = 480


def keyring_help_key(platform: str = sys.platform) -> str:
    if platform.startswith("win"):
        return "nokeyring.install.windows"
    if platform == "darwin":
        return "nokeyring.install.macos"
    return "nokeyring.install.linux"


class KeyringBanner(QFrame):
    """ "No system keyring: keys are kept for this session only" and what to install."""

    def __init__(self, secrets: SecretStore, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Notice")
        self.secrets = secrets
        row = QHBoxLayout(self)
        row.setContentsMargins(12, 8, 8, 8)
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        row.addWidget(self.text, 1)
        self.dismiss = QPushButton()
        self.dismiss.setProperty("flat", True)
        self.dismiss.clicked.connect(self._dismissed)
        row.addWidget(self.dismiss)
        self._dismissed_once = False
        self.setVisible(False)
        self.retranslate()

    def retranslate(self) -> None:
        self.text.setText(tr("nokeyring.banner", install=tr(keyring_help_key())))
        self.dismiss.setText(tr("nokeyring.dismiss"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def refresh(self) -> None:
        """Show the banner when the secret store found no usable keyring (after it was asked once)."""
        self.setVisible(not self.secrets.persistent and not self._dismissed_once)

    def _dismissed(self) -> None:
        self._dismissed_once = True
        self.setVisible(False)


class PanelFitter:
    """Folds the sidebar or the tool panel when the window is too narrow for both (see the module docstring)."""

    def __init__(
        self,
        width: Callable[[], int],
        sidebar: QWidget,
        set_sidebar: Callable[[bool], None],
        panel: QWidget,
        set_panel: Callable[[bool], None],
    ) -> None:
        self._width = width
        self._sidebar, self._set_sidebar = sidebar, set_sidebar
        self._panel, self._set_panel = panel, set_panel
        self.want_sidebar = True
        self.want_panel = True
        self.folded: set[str] = set()  # folded by the fitter, not by the user
        self._busy = False

    def _need(self, sidebar: bool, panel: bool) -> int:
        return (
            CHAT_MIN
            + (max(SIDEBAR_MIN, self._sidebar.width()) if sidebar else 0)
            + (max(PANEL_MIN, self._panel.minimumSizeHint().width()) if panel else 0)
        )

    def user_set(self, which: str, shown: bool) -> None:
        """The user showed or folded a panel: remember it, and make room for it if needed."""
        if self._busy:
            return
        if which == "sidebar":
            self.want_sidebar = shown
        else:
            self.want_panel = shown
        self.folded.discard(which)
        self.fit(prefer=which if shown else "")

    def fit(self, prefer: str = "") -> None:
        width = self._width()
        sidebar, panel = self.want_sidebar, self.want_panel
        if sidebar and panel and self._need(True, True) > width:
            if prefer == "panel":
                sidebar = False
            else:
                panel = False
        if sidebar and self._need(True, panel) > width:
            sidebar = False
        if panel and self._need(sidebar, True) > width:
            panel = False
        self._busy = True
        try:
            self.folded = {
                n
                for n, want, show in (("sidebar", self.want_sidebar, sidebar), ("panel", self.want_panel, panel))
                if want and not show
            }
            self._set_sidebar(sidebar)
            self._set_panel(panel)
        finally:
            self._busy = False
