"""SettingsStore: load (clean file, file with problems), save (atomic write incl. fsync), and planning with
the fail-closed policy lock, on a realistic settings.json (20 MCP servers, a deny list, approval rules).

    python bench/settings_store.py [--repeat 200]

Prints median, p99 and max in milliseconds. What matters: load and save stay well under a frame (16 ms).
A synchronous save (the CLI's) waits for the fsync, which the disk decides; the GUI's store writes behind
(``write_behind``): the saving (UI) thread pays for validation, the in-memory change and the notification,
the writer thread for the fsync. Rows:

- ``save, synchronous``: the caller's time of a save that writes the file itself (the GUI before).
- ``save, write-behind (caller)``: the caller's time of the GUI's save now. Both are paced 20 ms apart
  (as clicks) and interleaved, so they meet the same disk and the same load; the cyclic GC runs between
  saves, not inside one, as in the GUI (``MainThreadGC``): otherwise a gen-2 collection (~20 ms) lands in
  a random row's p99.
- ``the same, caller's CPU``: the saving thread's CPU time (``time.thread_time``): wall time above it is
  waiting (the disk when synchronous; a loaded machine or the writer thread's turn with the GIL otherwise).
- ``save, write-behind (to disk)``: from the save to the file on disk (``flush`` returns), same pace.
- ``save burst x50, write-behind``: 50 saves at once (the caller's total), then the flush.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
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


def _measure(fn: Callable[[], object], repeat: int) -> tuple[float, float, float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return _stats(times)


def _stats(times: list[float]) -> tuple[float, float, float]:
    times = sorted(times)
    return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.99))], times[-1]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    sys.setswitchinterval(0.001)  # as the GUI runs (ui/boot.py UI_SWITCH_INTERVAL_S)
    logging.getLogger("weclaw").setLevel(logging.CRITICAL)  # the broken file's warnings, once per load
    os.environ["WECLAW_HOME"] = tempfile.mkdtemp(prefix="weclaw-bench-settings-")
    from weclaw_desktop.paths import app_paths, tools_json_path
    from weclaw_desktop.settings import SettingsStore
    from weclaw_desktop.toolkit.planner import plan
    from weclaw_desktop.toolkit.registry import ToolRegistry

    path = app_paths().ensure().settings_file
    rows: list[tuple[str, float, float, float]] = []
    for broken in (False, True):
        path.write_text(json.dumps(_doc(broken), indent=1), encoding="utf-8")
        label = "with 3 problems" if broken else "clean"
        rows.append((f"load ({label})", *_measure(SettingsStore.open, args.repeat)))
    store = SettingsStore.open()  # synchronous: the CLI's, and the GUI's before write-behind
    behind = SettingsStore.open()
    behind.write_behind()  # the GUI's now
    flip = [False]

    def save(target: SettingsStore) -> tuple[float, float, float]:
        """(caller's ms, caller's CPU ms, ms until the file holds it)"""
        flip[0] = not flip[0]
        start, cpu = time.perf_counter(), time.thread_time()
        target.update(lambda s: setattr(s.ui, "close_to_tray", flip[0]))
        caller, used = time.perf_counter() - start, time.thread_time() - cpu
        assert target.flush() is None
        return caller * 1000, used * 1000, (time.perf_counter() - start) * 1000

    def pause() -> None:
        gc.collect()  # what the GUI's MainThreadGC does from its timer, between events
        time.sleep(0.02)

    timings: dict[str, list[float]] = {"sync": [], "sync cpu": [], "caller": [], "caller cpu": [], "disk": []}
    gc.disable()  # as in the GUI (ui/qtloop.py MainThreadGC): no collection inside a save
    for _ in range(args.repeat):  # interleaved and paced like clicks (20 ms apart): the same disk and load
        wall, used, _ = save(store)
        timings["sync"].append(wall)
        timings["sync cpu"].append(used)
        pause()
        wall, used, disk = save(behind)
        timings["caller"].append(wall)
        timings["caller cpu"].append(used)
        timings["disk"].append(disk)
        pause()
    gc.enable()
    rows.append(("save, synchronous (update + fsync + rename)", *_stats(timings["sync"])))
    rows.append(("  the same, caller's CPU", *_stats(timings["sync cpu"])))
    rows.append(("save, write-behind (caller)", *_stats(timings["caller"])))
    rows.append(("  the same, caller's CPU", *_stats(timings["caller cpu"])))
    rows.append(("save, write-behind (to disk)", *_stats(timings["disk"])))

    def burst() -> None:
        for _ in range(50):
            flip[0] = not flip[0]
            behind.update(lambda s: setattr(s.ui, "close_to_tray", flip[0]))

    rows.append(("save burst x50, write-behind (caller, total)", *_measure(burst, max(5, args.repeat // 20))))
    behind.flush()
    registry = ToolRegistry.from_path(tools_json_path())
    locked = store.settings.tools.policy
    assert locked.disabled_risks
    plan(registry, locked)
    rows.append(("plan, policy locked (bundled tools.json)", *_measure(lambda: plan(registry, locked), args.repeat)))
    free = locked.model_copy(update={"disabled_risks": []})
    plan(registry, free)
    rows.append(("plan, policy not locked", *_measure(lambda: plan(registry, free), args.repeat)))
    width = max(len(r[0]) for r in rows)
    print(f"{'':<{width}}  median ms    p99 ms    max ms   (n={args.repeat})")
    for name, median, p99, top in rows:
        print(f"{name:<{width}}  {median:9.3f} {p99:9.3f} {top:9.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
