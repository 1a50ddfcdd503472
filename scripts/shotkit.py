"""What the screenshot scripts share: a Qt application on WeClaw's event loop, the fail keyring (never the real
one) and a throwaway home and data folder, around one coroutine that takes the shots."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def run_scene(make: Callable[[], Coroutine[Any, Any, T]], *, prefix: str) -> T:
    """Run ``make()`` to completion with HOME/USERPROFILE and WECLAW_HOME in a temporary folder (removed after)."""
    import keyring
    from keyring.backends import fail
    from PySide6.QtWidgets import QApplication

    from weclaw_desktop.ui.qtloop import WeclawEventLoop

    keyring.set_keyring(fail.Keyring())  # type: ignore[no-untyped-call]  # never the real keyring
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    loop = WeclawEventLoop(app)
    asyncio.set_event_loop(loop)
    base = Path(tempfile.mkdtemp(prefix=prefix))
    (base / "home").mkdir()
    os.environ.update(HOME=str(base / "home"), USERPROFILE=str(base / "home"), WECLAW_HOME=str(base / "data"))
    try:
        with loop:
            return loop.run_until_complete(make())
    finally:
        shutil.rmtree(base, ignore_errors=True)
