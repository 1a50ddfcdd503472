"""Shared helpers of the agent tests (importable from subprocesses too)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from fakeopenai import FakeOpenAI
from helpers import tool_entry

from weclaw_desktop.settings import Settings

TEST_KEY = "sk-test-4f9a1c7e2b8d0a6f"  # a fake key; tests grep for it where it must not be
REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"


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


def write_manifest(path: Path, data: dict[str, Any] | None = None) -> Path:
    path.write_text(json.dumps(data or agent_manifest()), encoding="utf-8")
    return path


def make_settings(fake: FakeOpenAI, **agent: Any) -> Settings:
    s = Settings()
    s.provider.base_url = fake.base_url
    s.provider.model = "fake-model"
    s.provider.preset = "custom"
    s.provider.max_retries = 2
    s.provider.timeout_s = 20
    s.agent.exposure = "all"
    s.agent.model_titles = False  # scripted fakes: no side request for a title unless a test asks for it
    for key, value in agent.items():
        setattr(s.agent, key, value)
    return s


def child_env(home: Path, **extra: str) -> dict[str, str]:
    """Environment for ``python -m weclaw_desktop`` in a subprocess: this worktree and the test tools."""
    env = {k: v for k, v in os.environ.items() if k not in ("WECLAW_API_KEY", "OPENAI_API_KEY")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(TESTS), str(TESTS / "agent")])
    env["WECLAW_HOME"] = str(home)
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


def chat_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "weclaw_desktop", "chat", *args]


async def run_turn(rt: Any, text: str, session_id: str | None = None) -> tuple[Any, list[Any], str]:
    """Run one turn to the end; returns (TurnDone, events, session id)."""
    if session_id is None:
        session_id = (await rt.create_session()).id
    events: list[Any] = []
    handle = rt.start_turn(session_id, text, on_event=events.append)
    done = await handle.wait()
    return done, events, session_id


def kinds(events: list[Any]) -> list[str]:
    return [e.event_name() for e in events]


def of(events: list[Any], kind: str) -> list[Any]:
    return [e for e in events if e.event_name() == kind]
