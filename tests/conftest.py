"""Test setup: offscreen Qt, qasync as the asyncio loop, and user data isolated in a temp dir."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("LANG", "C.UTF-8")

import gc
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

sys.path.insert(0, str(Path(__file__).parent))


def pytest_asyncio_loop_factories(config: Any, item: Any) -> dict[str, Any]:
    """Run async tests on a qasync loop so Qt events are processed (ENGINEERING_NOTES.md)."""
    from PySide6.QtWidgets import QApplication

    from weclaw_desktop.ui.qtloop import WeclawEventLoop

    return {"qasync": lambda: WeclawEventLoop(QApplication.instance() or QApplication([]))}


@pytest.fixture(scope="session", autouse=True)
def _main_thread_gc() -> Iterator[None]:
    """Collect garbage only on the main thread, between tests (see weclaw_desktop.ui.qtloop.MainThreadGC).

    Automatic collection inside a worker thread can destroy a dead qasync loop's timer QObject off its
    thread, and the next Qt timer tick segfaults. Long-lived objects are frozen out of the way first, so
    the per-test collection only walks what the tests made.
    """
    import openai  # noqa: F401
    import PySide6.QtWidgets  # noqa: F401

    gc.collect()
    gc.freeze()
    gc.disable()
    yield
    gc.enable()


@pytest.fixture(autouse=True)
def _collect_after_each_test() -> Iterator[None]:
    yield
    gc.collect()


@pytest.fixture(autouse=True)
def _english_ui() -> Iterator[None]:
    """Every test starts (and leaves the next one) with the English UI; a test sets zh itself."""
    from weclaw_desktop.i18n import set_language

    set_language("en")
    yield
    set_language("en")


@pytest.fixture(autouse=True)
def weclaw_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test gets its own WECLAW_HOME; no test touches the real user's data."""
    home = tmp_path / "weclaw-home"
    home.mkdir()
    monkeypatch.setenv("WECLAW_HOME", str(home))
    for name in ("WECLAW_API_KEY", "OPENAI_API_KEY", "WECLAW_TOOLS"):
        monkeypatch.delenv(name, raising=False)
    yield home


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """tmp_path/home is the user's home folder for this test (HOME, USERPROFILE and the trash point there)."""
    user_home = tmp_path / "home"
    user_home.mkdir()
    monkeypatch.setenv("HOME", str(user_home))
    monkeypatch.setenv("USERPROFILE", str(user_home))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("LOCALAPPDATA", raising=False)
    monkeypatch.delenv("APPDATA", raising=False)
    try:  # send2trash's freedesktop backend computes the home trash at import time
        import send2trash.plat_other as trash

        data_home = user_home / ".local" / "share"
        monkeypatch.setattr(trash, "XDG_DATA_HOME", bytes(data_home))
        monkeypatch.setattr(trash, "HOMETRASH_B", bytes(data_home / "Trash"))
        monkeypatch.setattr(trash, "HOMETRASH", str(data_home / "Trash"))
    except ImportError:
        pass
    yield user_home


@pytest.fixture
async def fake_openai() -> Any:
    """A started fake OpenAI-compatible server (tests/fakeopenai.py); push replies with ``.push(...)``."""
    from fakeopenai import FakeOpenAI

    server = FakeOpenAI()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


class MemoryKeyring:
    """An in-memory keyring backend for tests."""

    def __init__(self) -> None:
        import keyring.backend

        class _Backend(keyring.backend.KeyringBackend):
            priority = 1  # type: ignore[assignment]
            store: ClassVar[dict[tuple[str, str], str]] = {}

            def get_password(self, service: str, username: str) -> str | None:
                return self.store.get((service, username))

            def set_password(self, service: str, username: str, password: str) -> None:
                self.store[(service, username)] = password

            def delete_password(self, service: str, username: str) -> None:
                import keyring.errors

                if (service, username) not in self.store:
                    raise keyring.errors.PasswordDeleteError(username)
                del self.store[(service, username)]

        _Backend.store = {}
        self.backend = _Backend()


@pytest.fixture
def memory_keyring() -> Iterator[Any]:
    import keyring

    previous = keyring.get_keyring()
    kr = MemoryKeyring().backend
    keyring.set_keyring(kr)
    yield kr
    keyring.set_keyring(previous)


@pytest.fixture
def no_keyring() -> Iterator[None]:
    import keyring
    from keyring.backends import fail

    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(previous)
