"""Desktop bridge: open files and URLs with the system's default apps (``QDesktopServices``)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices

from weclaw_desktop.frozen import child_environ


def _expand(path: Path | str) -> str:
    """``~`` expanded (string work only: it reads no file)."""
    return os.path.expanduser(str(path))


class QtDesktop:
    async def open_path(self, path: Path) -> bool:
        return bool(QDesktopServices.openUrl(QUrl.fromLocalFile(_expand(path))))

    async def open_url(self, url: str) -> bool:
        qurl = QUrl(url)
        if not qurl.isValid() or qurl.scheme().lower() not in ("http", "https", "mailto", "file"):
            return False
        return bool(QDesktopServices.openUrl(qurl))

    async def reveal(self, path: Path) -> bool:
        """Select the file in Explorer / Finder; elsewhere open its folder."""
        target = Path(_expand(path))
        command: list[str] | None = None
        if sys.platform == "win32":
            command = ["explorer", "/select,", str(target)]
        elif sys.platform == "darwin":
            command = ["open", "-R", str(target)]
        if command is not None:
            try:
                proc = await asyncio.create_subprocess_exec(*command, env=child_environ())
            except OSError:
                pass
            else:
                await proc.wait()
                return True
        folder = target if await asyncio.to_thread(target.is_dir) else target.parent
        return await self.open_path(folder)
