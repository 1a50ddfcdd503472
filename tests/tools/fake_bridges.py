"""In-memory bridges implementing weclaw_desktop.bridges.protocols, for the bridged-tool tests (clipboard, notify, screen, open)."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Any


def make_png(width: int, height: int, rgb: tuple[int, int, int] = (30, 120, 200)) -> bytes:
    """A real, valid PNG of one colour (decodable by any image library)."""

    def chunk(kind: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))

    row = b"\x00" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


class MemoryClipboard:
    def __init__(self, text: str = "") -> None:
        self.text = text
        self.writes: list[str] = []

    async def read_text(self) -> str:
        return self.text

    async def write_text(self, text: str) -> None:
        self.text = text
        self.writes.append(text)


class RecordingNotifier:
    def __init__(self) -> None:
        self.sent: list[tuple[str, str, bool]] = []

    async def notify(self, title: str, message: str, *, urgent: bool = False) -> None:
        self.sent.append((title, message, urgent))


class FakeScreens:
    """Two screens: 0 is 64x48 (primary), 1 is 32x16. ``broken`` returns bytes that are not a PNG."""

    def __init__(self, *, broken: bool = False) -> None:
        self.broken = broken
        self.layout: list[dict[str, Any]] = [
            {"index": 0, "name": "Built-in", "width": 64, "height": 48, "primary": True},
            {"index": 1, "name": "HDMI-1", "width": 32, "height": 16, "primary": False},
        ]
        self.captured: list[int | None] = []

    async def screens(self) -> list[dict[str, Any]]:
        return [dict(s) for s in self.layout]

    async def screenshot(self, screen_index: int | None = None) -> bytes:
        self.captured.append(screen_index)
        if self.broken:
            return b"not an image"
        screen = self.layout[screen_index if screen_index is not None else 0]
        return make_png(screen["width"], screen["height"])


class RecordingDesktop:
    def __init__(self, *, succeed: bool = True) -> None:
        self.succeed = succeed
        self.opened_paths: list[Path] = []
        self.opened_urls: list[str] = []
        self.revealed: list[Path] = []

    async def open_path(self, path: Path) -> bool:
        self.opened_paths.append(path)
        return self.succeed

    async def open_url(self, url: str) -> bool:
        self.opened_urls.append(url)
        return self.succeed

    async def reveal(self, path: Path) -> bool:
        self.revealed.append(path)
        return self.succeed
