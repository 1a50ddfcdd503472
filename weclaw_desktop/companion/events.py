"""What the phone link tells the rest of the app: plain callbacks, no Qt (the GUI adapts them to signals)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

log = logging.getLogger("weclaw.companion")


class EventKind(StrEnum):
    SERVER_STARTED = "server_started"
    SERVER_STOPPED = "server_stopped"
    DEVICE_PAIRED = "device_paired"  # data: replaced (the same phone paired again)
    PAIRING_CODE_USED = "pairing_code_used"  # the shown QR code is spent: show a new one
    DEVICE_REVOKED = "device_revoked"
    DEVICE_ONLINE = "device_online"
    DEVICE_OFFLINE = "device_offline"
    FILE_RECEIVED = "file_received"  # data: name, path, size, sha256, mime
    FILE_READY = "file_ready"  # data: session, file, name: held on the phone, waiting for the user's tap to save
    DELIVERY_ACKNOWLEDGED = "delivery_acknowledged"  # data: session, file, name, sha256, path: saved on the phone
    TRANSFER_PROGRESS = "transfer_progress"  # data: session, file, name, bytes, size
    TRANSFER_FAILED = "transfer_failed"  # data: session, file, name, reason (direction "in" for uploads)


@dataclass(frozen=True)
class CompanionEvent:
    kind: EventKind
    device_id: str = ""
    device_name: str = ""
    data: dict[str, Any] = field(default_factory=dict)


Listener = Callable[[CompanionEvent], None]


class EventHub:
    """Synchronous fan-out. A listener that raises is logged and does not stop the others."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def emit(self, event: CompanionEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("companion event listener failed on %s", event.kind)
