"""The main window: chats sidebar, chat area (setup panel / welcome / conversation + composer), the
tool panel dock, a toolbar and a status bar. It owns the Qt bridge services.

Plug-in points for other components:

- ``phone_action`` (toolbar "Phone") and the ``phone_requested`` signal: the companion opens its
  pairing dialog; :meth:`set_phone_status` drives the status-bar indicator and
  :meth:`set_phone_sender` enables "Send to phone" on file cards.
- :meth:`add_settings_page`: extra Settings pages, widgets with ``load(settings)`` / ``apply(settings)``.

Settings come from the :class:`SettingsStore` (``window.store``): the window reads ``store.settings``,
writes through ``store.update`` (tool switches, window geometry) and follows the store's notifications
(theme, tool panel, provider label, the notice about settings that could not be read). The store writes
the file behind (off the UI thread); a write that fails is a notice in the chat.

The keyboard (shortcut handlers, Up to edit the last message, a call opened from the Calls tab) is the
base class :class:`~weclaw_desktop.ui.window_keys.WindowKeys`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QByteArray, QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QResizeEvent
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from weclaw_desktop.bridges.qt_clipboard import QtClipboard
from weclaw_desktop.bridges.qt_desktop import QtDesktop
from weclaw_desktop.bridges.qt_notifier import QtNotifier
from weclaw_desktop.bridges.qt_screen import QtScreen
from weclaw_desktop.i18n import Text, tr
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import Settings, SettingsChange, SettingsStore
from weclaw_desktop.toolkit.availability import AvailabilityContext
from weclaw_desktop.toolkit.registry import ToolRegistry
from weclaw_desktop.ui import icons, shortcuts, theme
from weclaw_desktop.ui.approval_dialog import QtApprovalGate
from weclaw_desktop.ui.chat.column import MAX_COLUMN
from weclaw_desktop.ui.chat_controller import ChatController
from weclaw_desktop.ui.chat_view import ChatView
from weclaw_desktop.ui.composer import Composer
from weclaw_desktop.ui.find_bar import FindBar
from weclaw_desktop.ui.sessions_sidebar import SessionsSidebar
from weclaw_desktop.ui.settings_notice import SettingsNotice
from weclaw_desktop.ui.settings_write_banner import SettingsWriteBanner
from weclaw_desktop.ui.setup_panel import SetupPanel, WelcomePanel
from weclaw_desktop.ui.tasks import TaskSet
from weclaw_desktop.ui.tool_board import ToolBoard
from weclaw_desktop.ui.tool_card import CardActions, Report
from weclaw_desktop.ui.tool_panel import ToolPanel
from weclaw_desktop.ui.tool_panel_mcp import mode_saver
from weclaw_desktop.ui.translation import resolve as resolve_language
from weclaw_desktop.ui.translation import set_ui_language
from weclaw_desktop.ui.window_keys import WindowKeys
from weclaw_desktop.ui.window_parts import CHAT_MIN, MIN_HEIGHT, MIN_WIDTH, PANEL_MIN, KeyringBanner, PanelFitter

if TYPE_CHECKING:
    from weclaw_desktop.agent.runtime import AgentRuntime
    from weclaw_desktop.ui.settings_dialog import SettingsDialog

PHONE_STATES = ("off", "waiting", "connected", "error")
log = logging.getLogger("weclaw.ui")


class MainWindow(WindowKeys):
    phone_requested = Signal()
    quit_requested = Signal()
    #: the store's writer thread reports a failed (OSError) or recovered (None) write: queued to this thread
    settings_write_reported = Signal(object)

    def __init__(
        self,
        store: SettingsStore | Settings,
        registry: ToolRegistry,
        secrets: SecretStore | None = None,
        parent: QWidget | None = None,
    ) -> None:
        """``store``: the app's settings store (a bare Settings gets a store of its own on the data dir)."""
        super().__init__(parent)
        self.store = store if isinstance(store, SettingsStore) else SettingsStore(settings=store)
        self.registry = registry
        self.secrets = secrets or SecretStore()
        self._extra_pages: list[tuple[str | Text, QWidget]] = []
        self._phone_text: str | Text | None = None
        self._tokens_shown = 0
        self._quitting = False
        self.settings_dialog: SettingsDialog | None = None
        self._pending = TaskSet("window")
        self.setWindowTitle("WeClaw")
        self.setWindowIcon(icons.app_icon())
        self.resize(1240, 800)
        self.setMinimumSize(MIN_WIDTH, MIN_HEIGHT)

        # bridges (Qt services); injected into the registry by the composition root
        self.desktop = QtDesktop()
        self.clipboard = QtClipboard()
        self.screen_bridge = QtScreen()
        self.notifier = QtNotifier(self, icons.app_icon(), on_quit=self.quit_app, labels=tr)

        self.board = ToolBoard(registry, lambda: self.store.settings.tools.policy, self._availability)
        # registry changes (MCP servers adding 300 tools one by one) are batched into one refresh per 30 ms
        self._registry_timer = QTimer(self)
        self._registry_timer.setSingleShot(True)
        self._registry_timer.setInterval(30)
        self._registry_timer.timeout.connect(self._registry_settled)
        self._registry_pending = False
        self._unlisten = registry.add_listener(self._registry_changed)
        self.card_actions = CardActions(open_path=self._open_path, reveal_path=self._reveal_path)
        self.gate = QtApprovalGate(self, registry)

        # central area
        self.sidebar = SessionsSidebar()
        self.chat = ChatView(registry, self.board, self.card_actions)
        self.composer = Composer()
        self.setup_panel = SetupPanel()
        self.setup_panel.open_settings.connect(self.open_settings)
        self.welcome = WelcomePanel()
        self.stack = QStackedWidget()
        self.stack.addWidget(self.setup_panel)
        self.stack.addWidget(self.welcome)
        self.stack.addWidget(self.chat)
        chat_area = QWidget()
        chat_layout = QVBoxLayout(chat_area)
        chat_layout.setContentsMargins(0, 0, 0, 12)
        chat_layout.setSpacing(8)
        self.settings_notice = SettingsNotice(self.store, self._reveal_path)
        chat_layout.addWidget(self.settings_notice)
        self.keyring_banner = KeyringBanner(self.secrets)
        chat_layout.addWidget(self.keyring_banner)
        self.write_banner = SettingsWriteBanner(self.retry_settings_write)
        chat_layout.addWidget(self.write_banner)
        self.find_bar = FindBar(self.chat)
        chat_layout.addWidget(self.find_bar)
        chat_layout.addWidget(self.stack, 1)
        composer_holder = QWidget()
        holder_layout = QHBoxLayout(composer_holder)
        holder_layout.setContentsMargins(24, 0, 24, 0)
        self.composer.setMaximumWidth(MAX_COLUMN)  # the same readable column as the chat
        holder_layout.addWidget(self.composer)
        chat_layout.addWidget(composer_holder)
        chat_area.setMinimumWidth(CHAT_MIN - 60)
        self.composer.edit.installEventFilter(self)  # Up in an empty composer edits the last message
        self.chat.edit_last_requested.connect(self.edit_last_message)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setHandleWidth(1)
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(self.sidebar)
        splitter.addWidget(chat_area)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([240, 700])
        self.splitter = splitter
        self.setCentralWidget(splitter)

        self.controller = ChatController(
            self.chat,
            self.composer,
            self.sidebar,
            self.board,
            is_configured=lambda: self.settings.provider.configured,
            on_not_configured=lambda: self._open_settings_quietly(),
            parent=self,
        )
        self.controller.tokens_changed.connect(self._show_tokens)
        from weclaw_desktop.ui.conversation_parts import ConversationParts

        self.conversation = ConversationParts(self)  # pickers, export/import, message actions, usage (#16)
        self.chat_setup, self.message_actions = self.conversation.setup, self.conversation.actions
        self.controller.event_received.connect(self._event_shown)
        self.controller.turn_state_changed.connect(self._turn_state_changed)
        self.controller.session_shown.connect(lambda _sid: self._update_stack())

        # tool panel dock
        self.tool_panel = ToolPanel(self.board, on_switch=self.switch_tool, load_calls=self.load_calls)
        self.tool_panel.mcp_rows.on_mode = mode_saver(self.store, self.show_notice, self.board.refresh)
        self.tool_panel.setMinimumWidth(PANEL_MIN)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.tool_panel)
        self.resizeDocks([self.tool_panel], [340], Qt.Orientation.Horizontal)

        self._build_toolbar()
        self._build_status_bar()
        self.shortcut_actions = shortcuts.install(self, lambda name: getattr(self, f"shortcut_{name}"))
        self.fitter = PanelFitter(
            self.width, self.sidebar, self._set_sidebar, self.tool_panel, self.tool_panel.setVisible
        )
        self.sidebar_action.toggled.connect(lambda shown: self.fitter.user_set("sidebar", shown))
        self.tools_action.triggered.connect(lambda shown: self.fitter.user_set("panel", shown))
        self.tool_panel.call_activated.connect(self.show_call)
        self._restore_geometry()
        self._unsubscribe = self.store.subscribe(self._settings_changed)
        # saves change the settings at once; the file (fsync: 15-50 ms) is written off the UI thread
        self.settings_write_reported.connect(self._settings_write_reported)
        self.store.write_behind(self._report_write)
        self._untheme = theme.subscribe(self._theme_changed)
        self.retranslate()

    # --- language -------------------------------------------------------------------------------
    def retranslate(self) -> None:
        """Every text of the window's own chrome in the active language (the parts retranslate themselves)."""
        self.toolbar.setWindowTitle(tr("app.name"))
        self.new_action.setText(tr("action.new_chat"))
        self.phone_action.setText(tr("action.phone"))
        self.phone_action.setToolTip(tr("action.phone.tip"))
        self.settings_action.setText(tr("action.settings"))
        self.sidebar_action.setText(tr("action.chats"))
        self.sidebar_action.setToolTip(tr("action.chats.tip"))
        self.quit_action.setText(tr("action.quit"))
        self.tokens_label.setToolTip(tr("statusbar.tokens.tip"))
        self._show_tokens(self._tokens_shown)
        self.notifier.retranslate()
        self.set_phone_status(self.phone_state, self._phone_text)
        self.refresh_provider()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    # --- composition ----------------------------------------------------------------------------
    @property
    def settings(self) -> Settings:
        """The settings in use (the store's; read only: change them with ``store.update``)."""
        return self.store.settings

    @property
    def bridges(self) -> dict[str, Any]:
        """The bridge services this window provides, for ``registry.inject``."""
        return {
            "clipboard": self.clipboard,
            "notifier": self.notifier,
            "screen": self.screen_bridge,
            "desktop": self.desktop,
        }

    def attach_runtime(self, runtime: AgentRuntime) -> None:
        """Show and drive ``runtime`` (the composition root gave it this window's gate at creation)."""
        self.controller.attach(runtime)
        self.chat_setup.refresh()
        self._update_stack()
        self._spawn(self.check_keyring())

    async def check_keyring(self) -> None:
        """Ask the keyring once (off the UI thread: a Secret Service call can block) and show the banner when
        there is none."""
        await asyncio.to_thread(self.secrets.get, self.settings.provider.api_key_name)
        self.keyring_banner.refresh()

    @property
    def runtime(self) -> AgentRuntime | None:
        return self.controller.runtime

    def _availability(self) -> AvailabilityContext:
        return AvailabilityContext(has_secret=self.secrets.has)

    # --- chrome ---------------------------------------------------------------------------------
    def _build_toolbar(self) -> None:
        bar = QToolBar()
        self.toolbar = bar
        bar.setObjectName("MainToolbar")
        bar.setMovable(False)
        bar.setIconSize(icons.icon_size(18))
        bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.new_action = QAction(self)  # the button is at the top of the sidebar; Ctrl+N is in shortcuts.py
        icons.bind(self.new_action, "new_chat")
        self.new_action.triggered.connect(lambda: self.controller.spawn(self.controller.new_session()))
        self.sidebar_action = QAction(self)
        self.sidebar_action.setCheckable(True)
        self.sidebar_action.setChecked(True)
        icons.bind(self.sidebar_action, "history")
        bar.addAction(self.sidebar_action)
        brand = QLabel()
        icons.bind(brand, "app", "accent", size=22)
        brand.setContentsMargins(6, 0, 4, 0)
        bar.addWidget(brand)
        self.title_label = QLabel("<b>WeClaw</b>")
        bar.addWidget(self.title_label)
        spacer = QWidget()
        spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        bar.addWidget(spacer)
        self.phone_action = QAction(self)
        icons.bind(self.phone_action, "phone")
        self.phone_action.triggered.connect(self.phone_requested)
        bar.addAction(self.phone_action)
        self.tools_action = self.tool_panel.toggleViewAction()
        icons.bind(self.tools_action, "panel")
        bar.addAction(self.tools_action)
        self.settings_action = QAction(self)
        icons.bind(self.settings_action, "settings")
        self.settings_action.triggered.connect(self.open_settings)  # Ctrl+, (every platform): shortcuts.py
        bar.addAction(self.settings_action)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)
        self.quit_action = QAction(self)  # the tray menu's; Ctrl+Q is in shortcuts.py
        self.quit_action.triggered.connect(self.quit_app)

    def _build_status_bar(self) -> None:
        status = self.statusBar()
        status.setSizeGripEnabled(False)
        self.provider_label = QLabel()
        self.provider_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.provider_label.setMinimumWidth(40)  # a long endpoint URL is cut, not the window widened
        status.addWidget(self.provider_label, 1)
        self.tokens_label = QLabel()
        status.addPermanentWidget(self.tokens_label)
        self.phone_icon = QLabel()
        self.phone_label = QLabel()
        status.addPermanentWidget(self.phone_icon)
        status.addPermanentWidget(self.phone_label)
        self.set_phone_status("off")

    def refresh_provider(self) -> None:
        if hasattr(self, "conversation"):
            self.conversation.retranslate()
        self._update_stack()

    def _event_shown(self, _event: object) -> None:
        self._update_stack()

    def _turn_state_changed(self, running: bool) -> None:
        self._update_stack()
        if not running and self.tool_panel.tabs.currentWidget() is self.tool_panel.calls:
            self.load_calls()  # the Calls tab shows the calls of the turn that just ended

    def _show_tokens(self, n: int) -> None:
        self._tokens_shown = n
        if getattr(self, "conversation", None) is None or self.conversation.usage is None:
            self.tokens_label.setText(tr("statusbar.tokens", n=n))

    def _update_stack(self) -> None:
        if not self.settings.provider.configured and not self.chat.messages:
            self.stack.setCurrentWidget(self.setup_panel)
        elif not self.chat.has_content and self.controller.handle is None:
            self.stack.setCurrentWidget(self.welcome)
        else:
            self.stack.setCurrentWidget(self.chat)

    # --- phone link plug-in points ---------------------------------------------------------------
    def set_phone_status(self, state: str, text: str | Text | None = None) -> None:
        """``state``: off | waiting | connected | error; ``text`` overrides the label (e.g. a device name)."""
        self._phone_text = text
        c = theme.colors()
        color = {"connected": c.success, "waiting": c.info, "error": c.danger}.get(state, c.muted)
        self.phone_icon.setPixmap(icons.pixmap("phone", 14, color))
        key = f"phone.{state}" if state in PHONE_STATES else "phone.off"
        self.phone_label.setText(str(text) if text else tr(key))
        self.phone_state = state

    def set_phone_sender(self, sender: Callable[[list[Path]], None] | None) -> None:
        """Enable "Send to phone" on file cards (None disables it again)."""
        self.card_actions.send_to_phone = sender
        self.chat.refresh_phone_buttons()

    def show_notice(self, text: str | Text, kind: str = "info") -> None:
        """A one-line notice in the chat (e.g. a file arrived from the phone), made visible."""
        self.chat.add_notice(text, kind)
        self._update_stack()
        self.chat.scroll_to_end()

    def add_settings_page(self, title: str | Text, widget: QWidget) -> None:
        self._extra_pages.append((title, widget))

    # --- actions --------------------------------------------------------------------------------
    def _spawn(self, coro: Any) -> None:
        self._pending.spawn(coro)

    def _open_path(self, path: Path, report: Report | None = None) -> None:
        """Open a produced file with its app; when the system cannot, the card says why."""

        async def go() -> None:
            exists = await asyncio.to_thread(path.exists)
            ok = exists and await self.desktop.open_path(path)
            if not ok and report is not None:
                report(Text("card.open_failed" if exists else "card.open_missing", name=path.name))

        self._spawn(go())

    def _reveal_path(self, path: Path, report: Report | None = None) -> None:
        async def go() -> None:
            exists = await asyncio.to_thread(path.exists)
            ok = exists and await self.desktop.reveal(path)
            if not ok and report is not None:
                report(Text("card.reveal_failed" if exists else "card.open_missing", name=path.name))

        self._spawn(go())

    def switch_tool(self, tool: str, enabled: bool) -> None:
        """The user's per-tool switch: saved through the store; the runtime's policy follows its notice."""

        def switch(settings: Settings) -> None:
            settings.tools.policy = settings.tools.policy.with_switch(tool, enabled)

        try:
            self.store.update(switch)
        except OSError as exc:
            log.error("tool switch not saved: %s", exc)
            self.show_notice(tr("settings.invalid", message=exc.strerror or str(exc)), "error")
            self.board.refresh()

    def load_calls(self) -> None:
        runtime = self.runtime
        if runtime is None:
            return

        async def load() -> None:
            records = await runtime.audit.records()
            self.tool_panel.show_calls(records[-200:])

        self._spawn(load())

    def _open_settings_quietly(self) -> None:
        self.open_settings()

    def open_settings_page(self, page: str) -> SettingsDialog:
        return self.conversation.open_settings_page(page)

    def open_settings(self) -> SettingsDialog:
        from weclaw_desktop.ui.settings_dialog import SettingsDialog

        if self.settings_dialog is not None and self.settings_dialog.isVisible():
            self.settings_dialog.raise_()
            self.settings_dialog.activateWindow()
            return self.settings_dialog
        runtime = self.runtime
        dialog = SettingsDialog(
            self.store,
            self.secrets,
            extra_pages=self._extra_pages,
            key_lookup=runtime.api_key if runtime is not None else None,
            registry=self.registry,
            parent=self,
        )
        self.settings_dialog = dialog
        dialog.open()
        return dialog

    def _settings_changed(self, change: SettingsChange) -> None:
        """The store saved: follow what changed (the runtime follows the store on its own)."""
        if change.settings.ui.theme != change.previous.ui.theme:
            app = QApplication.instance()
            if isinstance(app, QApplication):
                theme.apply_theme(app, change.settings.ui.theme)
        if change.touches("ui"):
            set_ui_language(resolve_language(change.settings.ui.language))  # live: every open window retranslates
        if change.touches("tools", "mcp_servers"):
            self.board.refresh()
        if change.touches("providers"):
            self.refresh_provider()
        self.settings_notice.refresh()
        self.keyring_banner.refresh()

    def _report_write(self, error: OSError | None) -> None:
        """The store's report, on its writer thread: queued to the UI thread (not once the window is gone)."""
        if shiboken6.isValid(self) and not self._quitting:
            self.settings_write_reported.emit(error)

    def _settings_write_reported(self, error: OSError | None) -> None:
        """A save could not be written (the settings stay in use, the file keeps the old ones): the banner
        says so until a write works again, and a notice in the chat says when it did."""
        failing = self.write_banner.message != ""
        self.write_banner.report(error, self.store.path)
        if error is None and failing:
            self.show_notice(Text("settings.write_ok"))

    def retry_settings_write(self) -> None:
        """The banner's Try again: write the settings in use (off the UI thread)."""
        self._spawn(asyncio.to_thread(self.store.flush))

    def _registry_changed(self) -> None:
        """Throttled: the first change refreshes at once, changes within the next 30 ms once at its end."""
        if self._registry_timer.isActive():
            self._registry_pending = True
            return
        self.board.refresh()
        self._registry_timer.start()

    def _registry_settled(self) -> None:
        if self._registry_pending:
            self._registry_pending = False
            self.board.refresh()
            self._registry_timer.start()

    def _theme_changed(self, _colors: object) -> None:
        """The theme changed live: everything drawn in the old colours is drawn again (bound icons
        follow on their own, see icons.bind)."""
        self.chat.restyle()
        self.tool_panel.rebuild()
        self.set_phone_status(self.phone_state, self._phone_text)
        for part in (self.setup_panel, self.welcome, self.sidebar, self.settings_notice):
            restyle = getattr(part, "restyle", None)
            if callable(restyle):
                restyle()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if hasattr(self, "fitter"):
            self.fitter.fit()

    # --- window state ---------------------------------------------------------------------------
    def bring_to_front(self) -> None:
        self.notifier.show_window()

    def _restore_geometry(self) -> None:
        saved = self.settings.ui.window_geometry
        if saved:
            self.restoreGeometry(QByteArray.fromBase64(saved.encode("ascii")))

    def _save_geometry(self) -> None:
        geometry = bytes(self.saveGeometry().toBase64().data()).decode("ascii")
        if geometry == self.settings.ui.window_geometry:
            return

        def remember(settings: Settings) -> None:
            settings.ui.window_geometry = geometry

        with contextlib.suppress(OSError):
            self.store.update(remember)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._quitting and self.settings.ui.close_to_tray and self.notifier.available:
            event.ignore()
            self.hide()
            self._spawn(self.notifier.notify("WeClaw", tr("tray.still_running")))
            return
        self._save_geometry()
        event.accept()
        if not self._quitting:
            self.quit_app()

    def quit_app(self) -> None:
        if self._quitting:
            return
        self._quitting = True
        self.notifier.close()
        self._unlisten()
        self._unsubscribe()
        self._untheme()
        self.close()
        self.quit_requested.emit()
