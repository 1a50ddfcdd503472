"""Build small manifests for tests."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from weclaw_desktop.toolkit.manifest import Manifest

SAMPLE = "sample_tools"


def tool_entry(cls: str, actions: list[str], **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "module": SAMPLE,
        "class": cls,
        "actions": actions,
        "description": {"en": f"{cls} for tests", "zh": "测试工具"},
        "display": {"name": {"en": cls, "zh": cls}, "icon": "tool", "category": "test"},
    }
    entry.update(extra)
    return entry


def base_manifest() -> dict[str, Any]:
    return copy.deepcopy(
        {
            "version": 1,
            "tools": {
                "echo": tool_entry("EchoTool", ["say", "shout"], config={"prefix": ""}),
                "faulty": tool_entry("FaultyTool", ["crash", "refuse", "sleep", "nested"], timeout_s=0.5),
                "bridged": tool_entry("BridgedTool", ["paste"], bridges=["clipboard"]),
            },
            "intents": {
                "talk": {
                    "action_phrases": {"zh": ["重复"], "en": ["echo"]},
                    "tools": ["echo", "faulty", "bridged"],
                    "recommended": ["echo"],
                    "alternative": ["faulty", "bridged"],
                }
            },
            "profiles": {"full": ["*"], "echo_only": ["echo"]},
        }
    )


def manifest(data: dict[str, Any] | None = None) -> Manifest:
    return Manifest.model_validate(data or base_manifest())


def write(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path
