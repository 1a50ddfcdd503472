"""What each bridge offers to tools. Implementations: Qt (``qt*.py``), headless, and test doubles."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

#: Bridge names a tools.json entry may declare in ``bridges`` or ``requires``.
KNOWN_BRIDGES: frozenset[str] = frozenset(
    {"clipboard", "notifier", "screen", "desktop", "companion", "tool_index", "history"}
)


@runtime_checkable
class ClipboardBridge(Protocol):
    async def read_text(self) -> str: ...

    async def write_text(self, text: str) -> None: ...


@runtime_checkable
class NotifierBridge(Protocol):
    async def notify(self, title: str, message: str, *, urgent: bool = False) -> None: ...


@runtime_checkable
class ScreenBridge(Protocol):
    async def screens(self) -> list[dict[str, Any]]:
        """One dict per screen: index, name, width, height, primary."""
        ...

    async def screenshot(self, screen_index: int | None = None) -> bytes:
        """PNG bytes of one screen (None: the primary screen)."""
        ...


@runtime_checkable
class DesktopBridge(Protocol):
    async def open_path(self, path: Path) -> bool: ...

    async def open_url(self, url: str) -> bool: ...

    async def reveal(self, path: Path) -> bool:
        """Show the file or folder in the system file manager."""
        ...
