"""Fixtures of the safety tests: the world (sites, home, phone, clipboard) and runtimes on the real tools.json."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
for _p in (HERE.parent, HERE.parent / "agent", HERE.parent / "tools", HERE):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from agent_support import TEST_KEY, make_settings  # noqa: E402
from fake_bridges import MemoryClipboard  # noqa: E402
from fakeopenai import FakeOpenAI  # noqa: E402
from world import Site, make_home, serve  # noqa: E402

from weclaw_desktop.agent.runtime import AgentRuntime  # noqa: E402
from weclaw_desktop.companion import CompanionService  # noqa: E402
from weclaw_desktop.paths import app_paths, tools_json_path  # noqa: E402
from weclaw_desktop.settings import CompanionSettings, Settings  # noqa: E402
from weclaw_desktop.toolkit.approval import ApprovalGate  # noqa: E402
from weclaw_desktop.toolkit.base import Origin  # noqa: E402


@dataclass
class World:
    home: Path
    files: dict[str, Path]
    victim: Site
    attacker: Site
    phone: CompanionService
    clipboard: MemoryClipboard
    sent: list[list[str]] = field(default_factory=list)
    incoming: Path = Path()

    def settings(self, fake: FakeOpenAI, **agent: Any) -> Settings:
        s = make_settings(fake, exposure="progressive", **agent)
        s.tools.config = {
            "web": {
                "allow_private": True,
                "use_system_proxy": False,
                "timeout_s": 5,
                "duckduckgo_url": f"{self.victim.base}/ddg/html/",
            },
            "remote_file_share": {"ack_timeout_s": 1, "offline_wait_s": 0.2},
        }
        s.companion.incoming_dir = str(self.incoming)
        return s


async def _pair(service: CompanionService, name: str = "Pixel 7") -> None:
    """Pair a phone the way the phone page does (the QR code's URL and its secret)."""
    import aiohttp

    from weclaw_desktop.companion.client import pair_phone

    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
        await pair_phone(http, service.new_pairing_code().url, name)


@pytest.fixture
async def world(home: Path, tmp_path: Path) -> AsyncIterator[World]:
    files = make_home(home)
    incoming = tmp_path / "weclaw-home" / "data" / "incoming"
    incoming.mkdir(parents=True, exist_ok=True)
    service = CompanionService(
        CompanionSettings(auto_accept=True, incoming_dir=str(incoming)), paths=app_paths(), desktop_name="Test PC"
    )
    await service.start("127.0.0.1", 0)
    await _pair(service)
    async with serve(Site()) as victim, serve(Site()) as attacker:
        w = World(home, files, victim, attacker, service, MemoryClipboard(), incoming=incoming)
        real_send = service.send_files

        async def recording_send(paths: Any, *, device_id: str) -> Any:
            w.sent.append([str(p) for p in paths])
            return await real_send(paths, device_id=device_id)

        service.send_files = recording_send  # type: ignore[method-assign]
        yield w
    await service.stop()
    service.close()


RuntimeFactory = Callable[..., Awaitable[AgentRuntime]]


@pytest.fixture
async def make_runtime(world: World, fake_openai: FakeOpenAI) -> AsyncIterator[RuntimeFactory]:
    """Runtimes on the real tools.json with the world's phone and clipboard; closed at the end."""
    made: list[AgentRuntime] = []

    async def factory(gate: ApprovalGate | None, settings: Settings | None = None, **kwargs: Any) -> AgentRuntime:
        kwargs.setdefault("origin", Origin.GUI)
        rt = AgentRuntime.create(
            settings or world.settings(fake_openai),
            tools_json=Path(tools_json_path()),
            api_key=TEST_KEY,
            gate=gate,
            bridges={"companion": world.phone, "clipboard": world.clipboard},
            **kwargs,
        )
        made.append(rt)
        return rt

    yield factory
    for rt in made:
        await rt.close()
