"""The ``companion`` bridge protocol: what tools may ask of the phone link (CompanionService satisfies it)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from weclaw_desktop.companion.service import DeviceInfo
    from weclaw_desktop.companion.transfers import OutgoingTransfer


@runtime_checkable
class CompanionBridge(Protocol):
    @property
    def running(self) -> bool: ...

    @property
    def base_url(self) -> str: ...

    def is_online(self, device_id: str) -> bool: ...

    async def list_devices(self) -> list[DeviceInfo]: ...

    async def send_files(self, paths: Sequence[Path], *, device_id: str) -> OutgoingTransfer: ...

    def cancel(self, session_id: str, reason: str = ...) -> bool: ...
