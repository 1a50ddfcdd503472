"""Fixtures for the agent tests: the fake OpenAI server, a tools.json of test tools, a runtime on it."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
for _p in (HERE.parent, HERE):  # tests/ (fakeopenai, sample_tools, helpers) and tests/agent
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from agent_support import TEST_KEY, make_settings, write_manifest  # noqa: E402
from fakeopenai import FakeOpenAI  # noqa: E402

from weclaw_desktop.agent.runtime import AgentRuntime  # noqa: E402
from weclaw_desktop.settings import Settings  # noqa: E402
from weclaw_desktop.toolkit.base import Origin  # noqa: E402


@pytest.fixture
def tools_json(tmp_path: Path) -> Path:
    return write_manifest(tmp_path / "tools.json")


RuntimeFactory = Callable[..., Awaitable[AgentRuntime]]


@pytest.fixture
async def make_runtime(fake_openai: FakeOpenAI, tools_json: Path) -> AsyncIterator[RuntimeFactory]:
    """Build runtimes against the fake server with the test tools; closed at the end."""
    made: list[AgentRuntime] = []

    async def factory(settings: Settings | None = None, **kwargs: Any) -> AgentRuntime:
        kwargs.setdefault("api_key", TEST_KEY)
        kwargs.setdefault("origin", Origin.CLI)
        kwargs.setdefault("tools_json", tools_json)
        rt = AgentRuntime.create(settings or make_settings(fake_openai), **kwargs)
        made.append(rt)
        return rt

    yield factory
    for rt in made:
        await rt.close()


@pytest.fixture(autouse=True)
def _collect_garbage_on_the_main_thread() -> Iterator[None]:
    """Collect each test's dead qasync loop here, on the main thread.

    Otherwise the cyclic GC may collect it later inside a worker thread (SQLite work allocates a lot
    there); a QObject (qasync's timer) destroyed off its thread leaves its Qt timer registered, and the
    next timer event segfaults in QTimerInfoList::activateTimers (seen in a core dump).
    """
    from weclaw_desktop.secrets import forget_env_secrets

    forget_env_secrets()
    yield
    forget_env_secrets()
