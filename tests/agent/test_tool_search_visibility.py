"""tool_search names only tools the planner would offer now: not one the user switched off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_support import make_settings

from weclaw_desktop.paths import tools_json_path


async def test_tool_search_skips_switched_off_tools(make_runtime: Any, fake_openai: Any) -> None:
    settings = make_settings(fake_openai)
    rt = await make_runtime(settings, tools_json=Path(tools_json_path()))
    index = rt.registry.bridge("tool_index")
    found = [hit.name for hit in index.find("calculate 17 times 23 exactly")]
    assert "calculator" in found
    rt.dispatcher.policy = rt.dispatcher.policy.with_switch("calculator", False)
    assert "calculator" not in [hit.name for hit in index.find("calculate 17 times 23 exactly")]
