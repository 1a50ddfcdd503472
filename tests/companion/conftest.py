"""Fixtures for the phone link: a real CompanionService on 127.0.0.1 and a phone-like HTTP client."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from companion_helpers import Rig

from weclaw_desktop.companion import CompanionService
from weclaw_desktop.paths import app_paths
from weclaw_desktop.settings import CompanionSettings


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    incoming = tmp_path / "incoming"
    settings = CompanionSettings(auto_accept=True, incoming_dir=str(incoming), max_upload_mb=64)
    service = CompanionService(settings, paths=app_paths(), desktop_name="Test PC")
    await service.start("127.0.0.1", 0)
    jar = aiohttp.DummyCookieJar()  # the phone client sends its token explicitly, like the page's XHRs
    async with aiohttp.ClientSession(cookie_jar=jar) as http:
        r = Rig(service, http, incoming)
        service.events.subscribe(r.events.append)
        yield r
        await service.stop()
    if service._db is not None:
        service._db.close()
