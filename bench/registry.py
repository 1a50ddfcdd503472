"""Registry build, planning and exposure time for 20 and 200 synthetic tools (5 actions each).

    python bench/registry.py [--repeat 2000]

Prints median and p99 per size. Target: planning one request under 1 ms at 200 tools. "expose" is the
whole exposure computation of a round without schemas (visible -> every visible tool -> the 128-function
cap: what the tool panel, tool_search and ``weclaw tools`` compute).
Synthetic tools mix the availability signals real tools use (bridges, config, secrets, modules, platform).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from weclaw_desktop.toolkit import AvailabilityContext, ExposurePlanner, Policy, ToolRegistry, plan
from weclaw_desktop.toolkit.manifest import Manifest

REQUIRES: list[dict[str, Any] | None] = [
    None,
    {"bridge": "clipboard"},
    {"allOf": [{"config": "host"}, {"secret": "pw"}]},
    {"anyOf": [{"env": "NOPE_X"}, {"module": "json"}]},
    {"not": {"platform": "win32"}},
]


def synthetic(n: int) -> Manifest:
    tools: dict[str, Any] = {}
    for i in range(n):
        entry: dict[str, Any] = {
            "module": "weclaw_desktop.toolkit.base",
            "class": "BaseTool",
            "actions": [f"act{j}" for j in range(5)],
            "description": {"en": f"synthetic tool {i}", "zh": f"合成工具 {i}"},
            "display": {"name": {"en": f"T{i}"}, "category": f"c{i % 7}"},
            "config": {"host": "h" if i % 3 else ""},
        }
        req = REQUIRES[i % len(REQUIRES)]
        if req is not None:
            entry["requires"] = req
        tools[f"tool{i}"] = entry
    intents = {"all": {"action_phrases": {"en": ["x"], "zh": ["x"]}, "tools": list(tools), "recommended": ["tool0"]}}
    return Manifest.model_validate({"version": 1, "tools": tools, "intents": intents})


def measure(fn: Any, repeat: int) -> tuple[float, float]:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    samples.sort()
    return statistics.median(samples) * 1e6, samples[int(len(samples) * 0.99) - 1] * 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=2000)
    args = ap.parse_args()
    policy = Policy(deny=["tool1?"], disabled=["tool3"])
    ctx = AvailabilityContext(bridges={"clipboard"}, has_secret=lambda n: n == "pw", environ={})
    print(
        f"{'tools':>6} {'build median':>14} {'build p99':>10} {'plan median':>12} {'plan p99':>9} "
        f"{'expose median':>14} {'expose p99':>11}  visible"
    )
    for n in (20, 200):
        manifest = synthetic(n)
        b_med, b_p99 = measure(lambda m=manifest: ToolRegistry(m), max(args.repeat // 10, 50))
        registry = ToolRegistry(manifest)
        plan(registry, policy, ctx)  # warm the module-lookup cache, as a running app has
        p_med, p_p99 = measure(lambda r=registry: plan(r, policy, ctx), args.repeat)
        visible = len(plan(registry, policy, ctx).visible)
        exposure = ExposurePlanner(registry, policy=lambda: policy, availability=lambda: ctx)
        e_med, e_p99 = measure(exposure.compute, args.repeat)
        print(
            f"{n:>6} {b_med:>11.0f} us {b_p99:>7.0f} us {p_med:>9.0f} us {p_p99:>6.0f} us "
            f"{e_med:>11.0f} us {e_p99:>8.0f} us  {visible}/{n}"
        )
    print("target: plan p99 < 1000 us at 200 tools")


if __name__ == "__main__":
    main()
