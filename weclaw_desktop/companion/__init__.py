"""The mobile companion: a LAN server, QR pairing, verified transfers and the phone web page (DESIGN.md 6)."""

from weclaw_desktop.companion.bridge import CompanionBridge
from weclaw_desktop.companion.events import CompanionEvent, EventKind
from weclaw_desktop.companion.service import CompanionService, DeviceInfo, PairingRequest, attach_to_registry
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
