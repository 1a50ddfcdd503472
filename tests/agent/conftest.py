"""Fixtures for the agent tests: the fake OpenAI server, a tools.json of test tools, a runtime on it."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
for _p in (HERE.parent, HERE):  # tests/ (fakeopenai, sample_tools, helpers) and tests/agent
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from fakeopenai import FakeOpenAI  # noqa: E402
from helpers import tool_entry  # noqa: E402

from weclaw_desktop.agent.runtime import AgentRuntime  # noqa: E402
from weclaw_desktop.settings import Settings  # noqa: E402
from weclaw_desktop.toolkit.base import Origin  # noqa: E402

TEST_KEY = "sk-test-4f9a1c7e2b8d0a6f"  # a fake key; tests grep for it where it must not be


def agent_manifest() -> dict[str, Any]:
    proc = tool_entry("ProcTool", ["sleep", "env", "big"], timeout_s=30)
    proc["module"] = "weclaw_agent_test_tools"
    return {
        "version": 1,
        "tools": {
            "echo": tool_entry("EchoTool", ["say", "shout"], config={"prefix": ""}),
            "faulty": tool_entry("FaultyTool", ["crash", "refuse", "sleep", "nested"], timeout_s=5),
            "proc": proc,
            "bridged": tool_entry("BridgedTool", ["paste"], bridges=["clipboard"]),
        },
        "profiles": {"full": ["*"]},
    }


@pytest.fixture
def tools_json(tmp_path: Path) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(agent_manifest()), encoding="utf-8")
    return path


@pytest.fixture
async def fake_openai() -> AsyncIterator[FakeOpenAI]:
    """A started fake server; push replies with ``fake_openai.push(text_reply(...))``."""
    server = FakeOpenAI()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


def make_settings(fake: FakeOpenAI, **agent: Any) -> Settings:
    s = Settings()
    s.provider.base_url = fake.base_url
    s.provider.model = "fake-model"
    s.provider.preset = "custom"
    s.provider.max_retries = 2
    s.provider.timeout_s = 20
    s.agent.exposure = "all"
    for key, value in agent.items():
        setattr(s.agent, key, value)
    return s


RuntimeFactory = Callable[..., Awaitable[AgentRuntime]]


@pytest.fixture
async def make_runtime(fake_openai: FakeOpenAI, tools_json: Path) -> AsyncIterator[RuntimeFactory]:
    """Build runtimes against the fake server with the test tools; closed at the end."""
    made: list[AgentRuntime] = []

    async def factory(settings: Settings | None = None, **kwargs: Any) -> AgentRuntime:
        kwargs.setdefault("api_key", TEST_KEY)
        kwargs.setdefault("origin", Origin.CLI)
        rt = AgentRuntime.create(settings or make_settings(fake_openai), tools_json=tools_json, **kwargs)
        made.append(rt)
        return rt

    yield factory
    for rt in made:
        await rt.close()
