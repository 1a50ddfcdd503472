"""Screen bridge: list screens and grab one to PNG bytes (``QScreen.grabWindow(0)``)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtGui import QGuiApplication, QScreen


class ScreenCaptureError(RuntimeError):
    """The platform gave no image (e.g. Wayland without a portal). The message says what to do."""


class QtScreen:
    async def screens(self) -> list[dict[str, Any]]:
        primary = QGuiApplication.primaryScreen()
        out = []
        for index, screen in enumerate(QGuiApplication.screens()):
            geo = screen.geometry()
            out.append(
                {
                    "index": index,
                    "name": screen.name(),
                    "width": geo.width(),
                    "height": geo.height(),
                    "x": geo.x(),
                    "y": geo.y(),
                    "scale": screen.devicePixelRatio(),
                    "primary": screen is primary,
                }
            )
        return out

    async def screenshot(self, screen_index: int | None = None) -> bytes:
        screen = self._screen(screen_index)
        pixmap = screen.grabWindow(0)
        if pixmap.isNull():
            raise ScreenCaptureError(
                "The system did not allow a screenshot of this screen. On Wayland, allow screen capture "
                "for WeClaw or log in to an X11 session."
            )
        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        pixmap.save(buffer, "PNG")
        buffer.close()
        return bytes(data.data())

    @staticmethod
    def _screen(index: int | None) -> QScreen:
        screens = QGuiApplication.screens()
        if not screens:
            raise ScreenCaptureError("No screen is connected.")
        if index is None:
            primary = QGuiApplication.primaryScreen()
            return primary if primary is not None else screens[0]
        if not 0 <= index < len(screens):
            raise ScreenCaptureError(f"There is no screen {index}; screens are 0 to {len(screens) - 1}.")
        return screens[index]
