"""Fixtures for the phone link: a real CompanionService on 127.0.0.1 and a phone-like HTTP client."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

import aiohttp
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from companion_helpers import MemorySecrets, Rig
from fakeclock import FakeClock

from weclaw_desktop.companion import CompanionService
from weclaw_desktop.companion.limits import Limits
from weclaw_desktop.paths import app_paths
from weclaw_desktop.settings import CompanionSettings

#: Modules that need Qt events (widgets, or the server on the app's qasync loop next to a real browser).
QT_MODULES = {"test_pairing_dialog.py", "test_phone_page.py", "test_relay.py", "test_page_resume.py", "test_crypto.py"}


def pytest_asyncio_loop_factories(config: Any, item: Any) -> Mapping[str, Callable[[], Any]] | None:
    """Server, tool and unit tests use no Qt, so they run on a plain asyncio loop: faster, and clear of the
    rare crashes inside Qt that long runs of per-test qasync loops still show (see the report). The
    browser and dialog tests keep the root conftest's qasync loop, so the server is tested on the loop
    type the app uses."""
    if Path(str(item.path)).name in QT_MODULES:
        return None  # the root conftest's qasync loop
    return {"asyncio": asyncio.new_event_loop}


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def limits() -> Limits:
    return Limits()


@pytest.fixture
async def rig(tmp_path: Path, clock: FakeClock, limits: Limits) -> AsyncIterator[Rig]:
    incoming = tmp_path / "incoming"
    settings = CompanionSettings(auto_accept=True, incoming_dir=str(incoming), max_upload_mb=64)
    service = CompanionService(
        settings, paths=app_paths(), desktop_name="Test PC", secrets=MemorySecrets(), clock=clock, limits=limits
    )
    await service.start("127.0.0.1", 0)
    jar = aiohttp.DummyCookieJar()  # the page keeps no cookies either
    async with aiohttp.ClientSession(cookie_jar=jar) as http:
        r = Rig(service, http, incoming)
        service.events.subscribe(r.events.append)
        yield r
        await service.stop()
    service.close()
