"""The mobile companion: a LAN server, QR pairing, authenticated and encrypted transfers, the phone page."""

from weclaw_desktop.companion.bridge import CompanionBridge
from weclaw_desktop.companion.events import CompanionEvent, EventKind
from weclaw_desktop.companion.link import CompanionService, attach_to_registry
from weclaw_desktop.companion.service import DeviceInfo, PairingRequest
from weclaw_desktop.companion.transfers import FileState, OutgoingTransfer

__all__ = [
    "CompanionBridge",
    "CompanionEvent",
    "CompanionService",
    "DeviceInfo",
    "EventKind",
    "FileState",
    "OutgoingTransfer",
    "PairingRequest",
    "attach_to_registry",
]
