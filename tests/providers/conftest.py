"""Fixtures of the provider conformance tests: rule servers, and real AgentRuntimes on them under a profile."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
for _p in (HERE.parent, HERE.parent / "agent", HERE):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from agent_support import TEST_KEY, write_manifest  # noqa: E402
from provider_servers import RuleServer  # noqa: E402

from weclaw_desktop.agent.runtime import AgentRuntime  # noqa: E402
from weclaw_desktop.settings import Settings  # noqa: E402
from weclaw_desktop.toolkit.base import Origin  # noqa: E402


def provider_settings(server: RuleServer, preset: str, *, model: str = "fake-model", **provider: Any) -> Settings:
    """Settings for ``preset``'s profile, pointed at the scripted server."""
    s = Settings()
    s.provider.preset = preset
    s.provider.base_url = server.base_url
    s.provider.model = model
    s.provider.max_retries = 2
    s.provider.first_token_timeout_s = 20
    s.provider.idle_timeout_s = 20
    for key, value in provider.items():
        setattr(s.provider, key, value)
    s.agent.exposure = "all"
    return s


@pytest.fixture
def tools_json(tmp_path: Path) -> Path:
    return write_manifest(tmp_path / "tools.json")


RuntimeFactory = Callable[..., Awaitable[AgentRuntime]]


@pytest.fixture
async def runtime_on(tools_json: Path) -> AsyncIterator[RuntimeFactory]:
    """``await runtime_on(server, "deepseek", **provider_settings)``: a real runtime with the test tools."""
    made: list[AgentRuntime] = []

    async def factory(server: RuleServer, preset: str, **provider: Any) -> AgentRuntime:
        settings = provider_settings(server, preset, **provider)
        rt = AgentRuntime.create(settings, api_key=TEST_KEY, origin=Origin.CLI, tools_json=tools_json)
        made.append(rt)
        return rt

    yield factory
    for rt in made:
        await rt.close()


@pytest.fixture
async def rule_server() -> AsyncIterator[Callable[..., Awaitable[RuleServer]]]:
    """``await rule_server(rule)``: a started RuleServer, stopped at the end."""
    servers: list[RuleServer] = []

    async def factory(rule: Any = None) -> RuleServer:
        server = RuleServer(rule)
        await server.start()
        servers.append(server)
        return server

    yield factory
    for server in servers:
        await server.stop()
