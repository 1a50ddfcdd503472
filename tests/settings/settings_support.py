"""Helpers of the settings tests: a settings.json written by hand, and a tools.json with known risks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers import tool_entry

from weclaw_desktop.paths import app_paths

TEST_KEY = "sk-test-settings-5d2e9b"


def settings_path() -> Path:
    return app_paths().settings_file


def write_settings(content: dict[str, Any] | list[Any] | str | bytes) -> Path:
    """settings.json as a user (or a crash) left it, in this test's WECLAW_HOME."""
    path = settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_text(json.dumps(content, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def read_json() -> Any:
    return json.loads(settings_path().read_text(encoding="utf-8"))


def risky_manifest() -> dict[str, Any]:
    """echo is low risk, faulty is high risk, shouty is low with one high-risk action."""
    shouty = tool_entry("EchoTool", ["say", "shout"], config={"prefix": ""}, action_risk={"shout": "high"})
    return {
        "version": 1,
        "tools": {
            "echo": tool_entry("EchoTool", ["say", "shout"], config={"prefix": ""}),
            "faulty": tool_entry("FaultyTool", ["crash", "refuse", "sleep", "nested"], risk="high", timeout_s=5),
            "shouty": shouty,
        },
        "profiles": {"full": ["*"]},
    }


def write_tools(folder: Path) -> Path:
    path = folder / "tools.json"
    path.write_text(json.dumps(risky_manifest()), encoding="utf-8")
    return path


def user_file(base_url: str = "https://api.deepseek.com/v1", **overrides: Any) -> dict[str, Any]:
    """A settings file a user built up over time: provider, deny list, switches, folders, MCP servers."""
    doc: dict[str, Any] = {
        "version": 1,
        "provider": {"preset": "custom", "base_url": base_url, "model": "fake-model", "max_retries": 0},
        "agent": {"max_rounds": 9, "exposure": "all", "model_titles": False},
        "tools": {
            "policy": {"deny": ["faulty"], "disabled": ["shouty"]},
            "allowed_roots": ["/srv/projects", "~/Documents"],
        },
        "ui": {"language": "zh", "theme": "dark"},
        "mcp_servers": [
            {"name": "time", "command": "uvx", "args": ["mcp-server-time"]},
            {"name": "web", "transport": "http", "url": "https://example.com/mcp", "trusted": True},
        ],
    }
    for dotted, value in overrides.items():
        node = doc
        *parents, last = dotted.split("__")
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    return doc
