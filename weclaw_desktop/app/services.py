"""The app's long-lived services, plugged into the main window: reminders, MCP servers and the phone link.

    services = AppServices(window, paths)   # builds them, adds the MCP settings page, connects the window
    await services.start()                  # on the loop, after the window's bridges were injected
    ...
    await services.stop()                   # on quit: no server, port or child process is left behind

- :class:`ReminderScheduler` on the shared database, reaching the notifier through the registry.
- :class:`McpManager`: applies ``settings.mcp_servers`` at start and whenever the settings store saves a
  change to them; its page is an extra Settings page.
- :class:`CompanionService` (one per app): the toolbar's Phone action opens the (reused, non-modal)
  :class:`PairingDialog`; while the server runs it is the registry's ``companion`` bridge; the status bar
  follows its events; "Send to phone" on file cards goes to the most recently seen paired phone; files
  from the phone show up as a notice in the chat and a tray notification.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

import shiboken6

from weclaw_desktop.agent.mcp_client import ProviderSampler
from weclaw_desktop.companion import (
    CompanionEvent,
    CompanionService,
    DeviceInfo,
    EventKind,
    FileState,
    attach_to_registry,
)
from weclaw_desktop.i18n import Text, tr
from weclaw_desktop.mcp import McpManager
from weclaw_desktop.mcp.config import roots_of
from weclaw_desktop.mcp.interact import ClientHooks
from weclaw_desktop.paths import AppPaths
from weclaw_desktop.settings import Settings, SettingsChange
from weclaw_desktop.tools._db import shared_database
from weclaw_desktop.tools.reminder_scheduler import ReminderScheduler
from weclaw_desktop.ui.mcp_dialogs import QtUserAgent
from weclaw_desktop.ui.mcp_page import McpPage
from weclaw_desktop.ui.pairing_dialog import DeviceApprover, PairingDialog
from weclaw_desktop.ui.tasks import TaskSet

if TYPE_CHECKING:
    from weclaw_desktop.ui.main_window import MainWindow

log = logging.getLogger("weclaw.app")

#: How long "Send to phone" waits for the phone to confirm the files before it reports a failure.
SEND_TIMEOUT_S = 600.0
_STATUS_EVENTS = {
    EventKind.SERVER_STARTED,
    EventKind.SERVER_STOPPED,
    EventKind.DEVICE_ONLINE,
    EventKind.DEVICE_OFFLINE,
    EventKind.DEVICE_PAIRED,
    EventKind.DEVICE_REVOKED,
}


class AppServices:
    def __init__(
        self,
        window: MainWindow,
        paths: AppPaths,
        *,
        companion: CompanionService | None = None,
        mcp: McpManager | None = None,
        scheduler: ReminderScheduler | None = None,
    ) -> None:
        self.window = window
        self.paths = paths
        registry = window.registry
        self.scheduler = scheduler or ReminderScheduler(
            shared_database(paths.database), lambda: registry.bridge("notifier")
        )
        self.mcp = mcp or McpManager(registry, window.secrets, log_dir=paths.logs, hooks=self._mcp_hooks(window))
        # the service gets a copy: the store's settings are changed only through the store
        self.companion = companion or CompanionService(window.settings.companion.model_copy(), paths=paths)
        if self.companion.accept_device is None:  # a new phone is let in only when the user says yes
            self.companion.accept_device = DeviceApprover(window)
        self.pairing_dialog: PairingDialog | None = None
        self._tasks = TaskSet("app service")
        self._stopped = False

        self.mcp_page = McpPage(window.secrets)
        self.mcp_page.set_manager(self.mcp)
        window.composer.set_mcp_source(self.mcp)  # attach resources / use prompts from the composer
        window.add_settings_page(Text("category.mcp"), self.mcp_page)
        self._unfollow = window.store.subscribe(self._settings_changed, {"companion", "mcp_servers", "tools"})
        window.phone_requested.connect(self.open_pairing)
        self._detach_registry = attach_to_registry(self.companion, registry.inject)
        self._unsubscribe = self.companion.events.subscribe(self._on_companion_event)

    @staticmethod
    def _mcp_hooks(window: MainWindow) -> ClientHooks:
        """What MCP servers may ask of the desktop: the user (dialogs), the model (after a yes), the roots."""

        def provider() -> Any:
            runtime = window.runtime
            if runtime is None:
                raise RuntimeError("the assistant is not ready yet")
            return runtime.provider

        return ClientHooks(
            user=QtUserAgent(window),
            sampler=ProviderSampler(provider),
            roots=lambda: roots_of(window.settings.tools.allowed_roots),
        )

    # --- lifecycle ------------------------------------------------------------------------------
    async def start(self) -> None:
        """Reminders first (missed ones fire now), then the phone link if enabled, then MCP servers."""
        await self.scheduler.start()
        self.scheduler.wake()  # the notifier bridge is injected by now
        if self.window.settings.companion.enabled:
            await self.start_phone_link()
        await self.mcp.apply(self.window.settings.mcp_servers)  # returns at once; servers connect in the background

    async def start_phone_link(self) -> bool:
        """Start the companion server with its settings; a busy port is shown in the status bar, not raised."""
        try:
            await self.companion.start()
        except OSError as exc:
            log.warning("phone link not started: %s", exc)
            self.window.set_phone_status("error", Text("phone.error.detail", error=exc.strerror or str(exc)))
            return False
        return True

    async def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        await self._tasks.cancel_all()
        self.mcp_page.set_manager(None)
        for step in (self.mcp.stop_all, self.companion.stop, self.scheduler.stop):
            try:
                await step()
            except Exception:
                log.exception("stopping %s failed", getattr(step, "__qualname__", step))
        self._unsubscribe()
        self._unfollow()
        self._detach_registry()
        if self.pairing_dialog is not None and shiboken6.isValid(self.pairing_dialog):
            self.pairing_dialog.close()

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        return self._tasks.spawn(coro)

    # --- settings ------------------------------------------------------------------------------
    def _settings_changed(self, change: SettingsChange) -> None:
        """The store saved a change to the phone link's or the MCP servers' settings: follow it."""
        if change.touches("companion") and change.settings.companion != self.companion.settings:
            self.companion.settings = change.settings.companion.model_copy()
        if change.touches("mcp_servers") and not self._stopped:
            self.spawn(self.mcp.apply(change.settings.mcp_servers))
        if (
            change.touches("tools")
            and not self._stopped
            and (change.settings.tools.allowed_roots != change.previous.tools.allowed_roots)
        ):
            self.spawn(self.mcp.roots_changed())  # servers ask for the allowed folders again

    def _companion_settings_changed(self) -> None:
        """The pairing dialog changed the link's settings (on/off, auto-accept): save them through the store."""
        live = self.companion.settings.model_copy()

        def keep(settings: Settings) -> None:
            settings.companion = live

        try:
            self.window.store.update(keep)
        except OSError as exc:
            log.warning("settings not saved: %s", exc)

    # --- phone link ------------------------------------------------------------------------------
    def open_pairing(self) -> PairingDialog:
        dialog = self.pairing_dialog
        if dialog is None or not shiboken6.isValid(dialog):
            dialog = PairingDialog(
                self.companion,
                self.window,
                on_settings_changed=self._companion_settings_changed,
            )
            self.pairing_dialog = dialog
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()
        return dialog

    def _on_companion_event(self, event: CompanionEvent) -> None:
        if event.kind in _STATUS_EVENTS:
            running = self.companion.running
            self.window.set_phone_sender(self.send_to_phone if running else None)
            if not running:
                self.window.set_phone_status("off")
            elif not self._stopped:
                self.spawn(self.refresh_phone_status())
        elif event.kind is EventKind.FILE_RECEIVED:
            self._file_received(event)

    async def refresh_phone_status(self) -> None:
        if not self.companion.running:
            self.window.set_phone_status("off")
            return
        devices = await self.companion.list_devices()
        online = [d for d in devices if d.online]
        if not online:
            self.window.set_phone_status("waiting", Text("phone.waiting_pairing"))
        elif len(online) == 1:
            self.window.set_phone_status("connected", Text("phone.connected_one", name=online[0].name))
        else:
            self.window.set_phone_status("connected", Text("phone.connected_n", n=len(online)))

    def _file_received(self, event: CompanionEvent) -> None:
        name = str(event.data.get("name", ""))
        path = str(event.data.get("path", ""))
        device: str | Text = event.device_name or Text("phone.a_phone")
        self.window.show_notice(Text("phone.received", name=name, device=device, path=path))
        self.spawn(self.window.notifier.notify(tr("phone.received.title"), tr("phone.received.tray", name=name)))

    def send_to_phone(self, paths: list[Path]) -> None:
        """The file cards' "Send to phone": runs as a task; the outcome is shown in the chat."""
        self.spawn(self.deliver(paths))

    async def deliver(self, paths: list[Path]) -> bool:
        names = ", ".join(p.name for p in paths)
        try:
            device = await self.target_device()
            if device is None:
                self.window.show_notice(Text("phone.send.no_device"), "error")
                return False
            transfer = await self.companion.send_files(paths, device_id=device.id)
            self.window.show_notice(Text("phone.send.offered", names=names, device=device.name))
            on_phone = frozenset({FileState.READY, FileState.DELIVERED, FileState.FAILED, FileState.CANCELLED})
            settled = await transfer.wait(SEND_TIMEOUT_S, settled=on_phone)
            if settled and transfer.count(FileState.READY):  # held on the phone: only the user's tap saves it
                self.window.show_notice(Text("phone.send.ready", names=names, device=device.name))
                settled = await transfer.wait(SEND_TIMEOUT_S)
        except asyncio.CancelledError:
            raise
        except (OSError, LookupError, RuntimeError, ValueError) as exc:
            self.window.show_notice(Text("phone.send.failed", names=names, reason=str(exc)), "error")
            return False
        files = transfer.files.values()
        problems = [f"{f.name}: {f.error or f.state.value}" for f in files if f.state is not FileState.DELIVERED]
        if not settled or problems:
            if all(f.state in (FileState.DELIVERED, FileState.READY) for f in files):
                return False  # on the phone, not saved: already said so, not a failure
            reason: str | Text = "; ".join(problems) if settled else Text("phone.send.timeout")
            self.window.show_notice(Text("phone.send.failed", names=names, reason=reason), "error")
            return False
        self.window.show_notice(Text("phone.send.done", names=names, device=device.name))
        return True

    async def target_device(self) -> DeviceInfo | None:
        """The phone to send to: the online one seen most recently, else the most recently seen paired one."""
        devices = await self.companion.list_devices()
        if not devices:
            return None
        return max(devices, key=lambda d: (d.online, d.last_seen))
