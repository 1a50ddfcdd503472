"""SettingsStore: load (clean file, file with problems), save (atomic write incl. fsync), and planning with
the fail-closed policy lock, on a realistic settings.json (20 MCP servers, a deny list, approval rules).

    python bench/settings_store.py [--repeat 200]

Prints median and p99 in milliseconds. What matters: load and save stay well under a frame (16 ms) apart
from the fsync, which the disk decides (a tool switch saves on the UI thread).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _doc(broken: bool) -> dict[str, Any]:
    servers: list[Any] = [{"name": f"server{i}", "command": "uvx", "args": [f"mcp-{i}"]} for i in range(20)]
    doc: dict[str, Any] = {
        "version": 1,
        "provider": {"preset": "deepseek", "base_url": "https://api.deepseek.com/v1", "model": "deepseek-chat"},
        "agent": {"max_rounds": 20, "approvals": {"remembered": [f"tool{i}_run" for i in range(30)]}},
        "tools": {"policy": {"deny": ["shell", "python_runner"], "disabled": ["clipboard"]}, "allowed_roots": ["~"]},
        "mcp_servers": servers,
    }
    if broken:
        doc["agent"]["max_rounds"] = "ten"
        doc["tools"]["policy"]["deny"] = "shell"
        servers[3] = {"name": "legacy", "transport": "sse", "url": "https://x"}
    return doc


def _measure(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.99))]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    os.environ["WECLAW_HOME"] = tempfile.mkdtemp(prefix="weclaw-bench-settings-")
    from weclaw_desktop.paths import app_paths, tools_json_path
    from weclaw_desktop.settings import SettingsStore
    from weclaw_desktop.toolkit.planner import plan
    from weclaw_desktop.toolkit.registry import ToolRegistry

    path = app_paths().ensure().settings_file
    rows: list[tuple[str, float, float]] = []
    for broken in (False, True):
        path.write_text(json.dumps(_doc(broken), indent=1), encoding="utf-8")
        label = "with 3 problems" if broken else "clean"
        rows.append((f"load ({label})", *_measure(SettingsStore.open, args.repeat)))
    store = SettingsStore.open()
    flip = [False]

    def save() -> None:
        flip[0] = not flip[0]
        store.update(lambda s: setattr(s.ui, "close_to_tray", flip[0]))

    rows.append(("save (update + fsync + rename)", *_measure(save, args.repeat)))
    registry = ToolRegistry.from_path(tools_json_path())
    locked = store.settings.tools.policy
    assert locked.disabled_risks
    plan(registry, locked)
    rows.append(("plan, policy locked (bundled tools.json)", *_measure(lambda: plan(registry, locked), args.repeat)))
    free = locked.model_copy(update={"disabled_risks": []})
    plan(registry, free)
    rows.append(("plan, policy not locked", *_measure(lambda: plan(registry, free), args.repeat)))
    width = max(len(r[0]) for r in rows)
    print(f"{'':<{width}}  median ms    p99 ms   (n={args.repeat})")
    for name, median, p99 in rows:
        print(f"{name:<{width}}  {median:9.3f} {p99:9.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
