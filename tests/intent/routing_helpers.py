"""Manifests for the intent tests (imported by the test modules; conftest puts this folder on sys.path)."""

from __future__ import annotations

import copy
from typing import Any

from weclaw_desktop.toolkit.manifest import Manifest


def all_enabled(manifest: Manifest) -> Manifest:
    """The manifest with every tool enabled: routing is measured as if the whole catalogue were built."""
    data = manifest.model_dump(by_alias=True, exclude_none=True)
    for entry in data["tools"].values():
        entry["enabled"] = True
    return Manifest.model_validate(data)


def tool(actions: list[str], **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "module": "sample_tools",
        "class": "EchoTool",
        "actions": actions,
        "description": {"en": "test tool", "zh": "测试工具"},
        "display": {"name": {"en": "t", "zh": "t"}},
    }
    entry.update(extra)
    return entry


def small_manifest(**exposure: Any) -> dict[str, Any]:
    """Four intents over a handful of tools, with thresholds the tests can reason about."""
    return copy.deepcopy(
        {
            "version": 1,
            "tools": {
                "tool_search": tool(["find"], always_on=True, description={"en": "Find tools.", "zh": "找工具"}),
                "files": tool(["read", "write"], description={"en": "Read and write files.", "zh": "读写文件"}),
                "shell": tool(["run"], description={"en": "Run shell commands.", "zh": "运行命令"}),
                "phone": tool(["send"], depends_on=["files"], description={"en": "Send to phone.", "zh": "发手机"}),
                "mail": tool(["send"], description={"en": "Send e-mail.", "zh": "发邮件"}),
                "zipper": tool(["zip", "unzip"], description={"en": "Zip archives.", "zh": "压缩"}),
                "off": tool(["x"], enabled=False),
            },
            "intents": {
                "files": {
                    "action_phrases": {"zh": ["重命名"], "en": ["rename"]},
                    "topics": {"zh": ["文件"], "en": ["file"]},
                    "tools": ["files", "shell"],
                    "recommended": ["files"],
                    "alternative": ["shell"],
                },
                "phone": {
                    "action_phrases": {"zh": ["发*手机"], "en": ["to my phone"]},
                    "tools": ["phone", "mail", "off"],
                    "recommended": ["phone", "off"],
                    "alternative": ["mail"],
                },
                "archive": {
                    "action_phrases": {"zh": ["压缩"], "en": ["zip"]},
                    "tools": ["zipper", "files"],
                    "recommended": ["zipper"],
                    "alternative": ["files"],
                },
                "mail": {
                    "action_phrases": {"zh": ["邮件"], "en": ["email"]},
                    "tools": ["mail"],
                    "recommended": ["mail"],
                },
            },
            "exposure": {
                "high_threshold": 0.6,
                "medium_threshold": 0.3,
                "max_tools_per_request": 6,
                "similarity_weight": 0.0,
                **exposure,
            },
        }
    )


def make(data: dict[str, Any]) -> Manifest:
    return Manifest.model_validate(data)
