"""The phone dialog: turn the phone link on or off, show the pairing QR code, list and remove phones.

    dialog = PairingDialog(service, parent=window)   # service: CompanionService; text in the UI language
    dialog.show()

Everything async (start, stop, listing, revoking) runs as tasks on the qasync loop; nothing blocks the UI
and no ``exec()`` is used. :class:`DeviceApprover` asks the user, non-modally, whether a new phone may pair;
the dialog installs one on the service if the app has not set its own.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

import shiboken6
from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QGuiApplication, QPixmap
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from weclaw_desktop.companion import CompanionEvent, CompanionService, DeviceInfo, EventKind, PairingRequest
from weclaw_desktop.companion.network import Interface, candidate_interfaces
from weclaw_desktop.companion.pairing import PairingCode
from weclaw_desktop.companion.qr import qr_png
from weclaw_desktop.i18n import Text, tr
from weclaw_desktop.ui.tasks import TaskSet
from weclaw_desktop.ui.translation import MessageBox

log = logging.getLogger("weclaw.ui.pairing")


def ago(ts: float, now: float | None = None) -> str:
    """ "just now", "5 min ago", "3 h ago", "2 days ago" in the UI language."""
    s = max(0, int((time.time() if now is None else now) - ts))
    if s < 90:
        return tr("pairing.now")
    if s < 5400:
        return tr("pairing.min", n=s // 60)
    if s < 172800:
        return tr("pairing.hour", n=s // 3600)
    return tr("pairing.day", n=s // 86400)


class DeviceApprover:
    """``service.accept_device``: asks the user with a non-modal message box and awaits the answer."""

    def __init__(self, parent: QWidget | None = None) -> None:
        self.parent = parent
        self.box: QMessageBox | None = None

    async def __call__(self, req: PairingRequest) -> bool:
        parent = self.parent if self.parent is not None and shiboken6.isValid(self.parent) else None
        box = MessageBox(
            QMessageBox.Icon.Question,
            Text("pairing.ask.title"),
            Text("pairing.ask.body", name=req.name, address=req.address),
            parent,
        )
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.setWindowModality(Qt.WindowModality.NonModal)
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

        def done(result: int) -> None:
            if not future.done():
                future.set_result(box.standardButton(box.clickedButton()) == QMessageBox.StandardButton.Yes)

        box.finished.connect(done)
        self.box = box
        box.open()
        try:
            return await future
        finally:
            self.box = None
            if shiboken6.isValid(box):
                box.close()
                box.deleteLater()


class PairingDialog(QDialog):
    def __init__(
        self,
        service: CompanionService,
        parent: QWidget | None = None,
        *,
        on_settings_changed: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(parent)
        self.service = service
        self._hint: Text | None = None  # what the hint line says (re-rendered on a language change)
        self._devices: list[DeviceInfo] = []
        self.on_settings_changed = on_settings_changed or (lambda: None)
        self.code: PairingCode | None = None
        self._tasks = TaskSet("phone dialog")
        if service.accept_device is None:
            service.accept_device = DeviceApprover(parent or self)
        self.setMinimumWidth(520)
        self._build()
        self.retranslate()
        unsubscribe = service.events.subscribe(self._on_event)
        self.destroyed.connect(lambda *_: unsubscribe())
        self._timer = QTimer(self)
        self._timer.setInterval(1000)
        self._timer.timeout.connect(self._tick)
        self._timer.start()
        self._interfaces: list[Interface] = []
        self._spawn(self._load_interfaces())
        self._refresh_code()
        self._spawn(self.refresh_devices())

    # --- layout ---------------------------------------------------------------------------------
    def _build(self) -> None:
        s = self.service.settings
        root = QVBoxLayout(self)
        root.setContentsMargins(18, 16, 18, 14)
        root.setSpacing(12)

        self.link = QCheckBox()
        self.link.setChecked(self.service.running)
        self.link.toggled.connect(self._on_link_toggled)
        root.addWidget(self.link)

        form = QFormLayout()
        form.setHorizontalSpacing(12)
        self.interface = QComboBox()
        self.interface.addItem("", "")
        self._auto_address = "…"
        self.interface.currentIndexChanged.connect(self._on_network_changed)
        self.interface_label = QLabel()
        form.addRow(self.interface_label, self.interface)
        self.port = QSpinBox()
        self.port.setRange(1024, 65535)
        self.port.setValue(s.port if s.port >= 1024 else 8765)
        self.port.editingFinished.connect(self._on_network_changed)
        self.port_label = QLabel()
        form.addRow(self.port_label, self.port)
        root.addLayout(form)
        self.auto_accept = QCheckBox()
        self.auto_accept.setChecked(s.auto_accept)
        self.auto_accept.toggled.connect(self._on_auto_accept)
        root.addWidget(self.auto_accept)

        line = QFrame()
        line.setFrameShape(QFrame.Shape.HLine)
        line.setFrameShadow(QFrame.Shadow.Sunken)
        root.addWidget(line)

        pair = QHBoxLayout()
        pair.setSpacing(16)
        self.qr = QLabel()
        self.qr.setFixedSize(240, 240)
        self.qr.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.qr.setStyleSheet("background: white; border: 1px solid #d0d7de; border-radius: 8px;")
        pair.addWidget(self.qr)
        side = QVBoxLayout()
        side.setSpacing(8)
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        side.addWidget(self.hint)
        self.url = QLineEdit()
        self.url.setReadOnly(True)
        side.addWidget(self.url)
        self.expiry = QLabel()
        self.expiry.setWordWrap(True)
        side.addWidget(self.expiry)
        buttons = QHBoxLayout()
        self.copy = QPushButton()
        self.copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.url.text()))
        self.new_code = QPushButton()
        self.new_code.clicked.connect(self._refresh_code)
        buttons.addWidget(self.copy)
        buttons.addWidget(self.new_code)
        buttons.addStretch(1)
        side.addLayout(buttons)
        side.addStretch(1)
        pair.addLayout(side, 1)
        root.addLayout(pair)

        self.devices_title = QLabel()
        root.addWidget(self.devices_title)
        self.devices = QTreeWidget()
        self.devices.setRootIsDecorated(False)
        self.devices.setColumnCount(4)
        header = self.devices.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in (1, 2, 3):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.devices.setMinimumHeight(120)
        root.addWidget(self.devices)
        self.empty = QLabel()
        self.empty.setStyleSheet("color: palette(placeholder-text);")
        root.addWidget(self.empty)
        self.incoming = QLabel()
        self.incoming.setWordWrap(True)
        self.incoming.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        root.addWidget(self.incoming)
        self.no_keyring = QLabel()  # without a keyring the link's key lives for this run only
        self.no_keyring.setWordWrap(True)
        self.no_keyring.setStyleSheet("color: #9a6700;")
        root.addWidget(self.no_keyring)

    def retranslate(self) -> None:
        self.setWindowTitle(tr("pairing.title"))
        self.link.setText(tr("pairing.link"))
        self.interface.setItemText(0, tr("pairing.auto", address=self._auto_address))
        self.interface_label.setText(tr("pairing.interface"))
        self.port_label.setText(tr("pairing.port"))
        self.auto_accept.setText(tr("pairing.auto_accept"))
        self.copy.setText(tr("pairing.copy"))
        self.new_code.setText(tr("pairing.new_code"))
        self.devices_title.setText(f"<b>{tr('pairing.devices')}</b>")
        self.devices.setHeaderLabels([tr("pairing.col.name"), tr("pairing.col.status"), tr("pairing.col.seen"), ""])
        self.empty.setText(tr("pairing.none"))
        self.incoming.setText(tr("pairing.incoming", path=str(self.service.incoming_dir)))
        self.no_keyring.setText(tr("pairing.no_keyring"))
        self.no_keyring.setVisible(self.service.opened and not self.service.keys_persistent)
        if self._hint is not None:
            self.hint.setText(str(self._hint))
        self._tick()
        self._show_devices(self._devices)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def _set_hint(self, text: Text) -> None:
        self._hint = text
        self.hint.setText(str(text))

    # --- async plumbing ---------------------------------------------------------------------------
    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        return self._tasks.spawn(coro)

    async def idle(self) -> None:
        """Wait for the dialog's pending work (tests use it)."""
        await self._tasks.idle()

    # --- network and link -------------------------------------------------------------------------
    async def _load_interfaces(self) -> None:
        found = await asyncio.to_thread(candidate_interfaces)
        if not shiboken6.isValid(self):
            return
        self._interfaces = found
        default = next((i.address for i in found if i.is_default), found[0].address if found else "127.0.0.1")
        self.interface.blockSignals(True)
        self._auto_address = default
        self.interface.setItemText(0, tr("pairing.auto", address=default))
        for i in found:
            self.interface.addItem(i.label, i.address)
        wanted = self.service.settings.interface
        index = self.interface.findData(wanted) if wanted else 0
        self.interface.setCurrentIndex(max(0, index))
        self.interface.blockSignals(False)

    def _on_network_changed(self, *_: Any) -> None:
        s = self.service.settings
        address = str(self.interface.currentData() or "")
        if address == s.interface and self.port.value() == s.port:
            return
        s.interface = address
        s.port = self.port.value()
        self.on_settings_changed()
        if self.service.running:
            self._spawn(self._start())

    def _on_link_toggled(self, on: bool) -> None:
        self.service.settings.enabled = on
        self.on_settings_changed()
        self._spawn(self._start() if on else self._stop())

    async def _start(self) -> None:
        self._set_hint(Text("pairing.starting"))
        try:
            await self.service.start()
        except OSError as exc:
            if shiboken6.isValid(self):
                self.link.blockSignals(True)
                self.link.setChecked(False)
                self.link.blockSignals(False)
                self._set_hint(Text("pairing.error", error=exc.strerror or str(exc)))
            return
        if shiboken6.isValid(self):
            self._refresh_code()

    async def _stop(self) -> None:
        await self.service.stop()
        if shiboken6.isValid(self):
            self._refresh_code()

    def _on_auto_accept(self, on: bool) -> None:
        self.service.settings.auto_accept = on
        self.on_settings_changed()

    # --- QR code ----------------------------------------------------------------------------------
    def _refresh_code(self) -> None:
        self.no_keyring.setVisible(self.service.opened and not self.service.keys_persistent)
        on = self.service.running
        for w in (self.url, self.copy, self.new_code, self.expiry):
            w.setVisible(on)
        if not on:
            self.code = None
            self.qr.clear()
            self.qr.setText("📱")
            self.qr.setStyleSheet(
                "background: palette(base); border: 1px dashed #d0d7de; border-radius: 8px; font-size: 64px;"
            )
            self._set_hint(Text("pairing.off"))
            return
        self.code = self.service.new_pairing_code()
        pixmap = QPixmap()
        pixmap.loadFromData(qr_png(self.code.url, scale=5, border=2), "PNG")
        self.qr.setStyleSheet("background: white; border: 1px solid #d0d7de; border-radius: 8px;")
        self.qr.setPixmap(
            pixmap.scaled(228, 228, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.FastTransformation)
        )
        self.url.setText(self.code.url)
        self.url.setCursorPosition(0)  # show http://address:port, the part a person may type
        self._set_hint(Text("pairing.scan"))
        self._tick()

    def _tick(self) -> None:
        if self.code is None:
            return
        left = int(self.code.seconds_left(self.service.clock()))
        if left <= 0:
            self._refresh_code()  # keep a working code on screen while the dialog is open
            return
        self.expiry.setText(tr("pairing.valid", time=f"{left // 60}:{left % 60:02d}"))

    # --- devices ----------------------------------------------------------------------------------
    async def refresh_devices(self) -> None:
        devices = await self.service.list_devices()
        if shiboken6.isValid(self):
            self._show_devices(devices)

    def _show_devices(self, devices: list[DeviceInfo]) -> None:
        self._devices = devices
        self.devices.clear()
        for d in devices:
            item = QTreeWidgetItem(
                [d.name, tr("pairing.online" if d.online else "pairing.offline"), ago(d.last_seen), ""]
            )
            item.setData(0, Qt.ItemDataRole.UserRole, d.id)
            self.devices.addTopLevelItem(item)
            button = QPushButton(tr("pairing.remove"))
            button.setObjectName(f"remove-{d.id}")
            button.clicked.connect(lambda _=False, device_id=d.id: self._spawn(self._revoke(device_id)))
            self.devices.setItemWidget(item, 3, button)
        self.devices.setVisible(bool(devices))
        self.empty.setVisible(not devices)

    async def _revoke(self, device_id: str) -> None:
        await self.service.revoke(device_id)
        await self.refresh_devices()

    def _on_event(self, event: CompanionEvent) -> None:
        if not shiboken6.isValid(self):
            return
        if event.kind in (
            EventKind.DEVICE_PAIRED,
            EventKind.DEVICE_REVOKED,
            EventKind.DEVICE_ONLINE,
            EventKind.DEVICE_OFFLINE,
        ):
            self._spawn(self.refresh_devices())
        if event.kind in (EventKind.DEVICE_PAIRED, EventKind.PAIRING_CODE_USED):
            self._refresh_code()  # the shown code was used up (or declined): show a fresh one for the next phone
        elif event.kind in (EventKind.SERVER_STARTED, EventKind.SERVER_STOPPED):
            self.link.blockSignals(True)
            self.link.setChecked(self.service.running)
            self.link.blockSignals(False)
            self._refresh_code()
