"""Routing latency: one request through the intent engine and the first round of exposure.

    python bench/intent.py [--repeat 30]

Prints median and p99 per request (microseconds) for
- the real catalogue (tools.json, every tool counted as enabled), over the dev requests of
  ../shared/eval/intent_dev.jsonl when present, else a built-in sample in both languages;
- 200 synthetic tools in 40 intents with 20 keywords each (routing cost must not grow with the catalogue).

Target (issue 3): <= 200 us per request. Two clocks per request: wall time (``perf_counter_ns``) and the
thread's CPU time (``thread_time_ns``). On a busy machine wall time includes waiting for a CPU (its p99
then measures the scheduler); CPU time is the cost of routing itself.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from weclaw_desktop.intent.exposure import ProgressiveExposer
from weclaw_desktop.paths import tools_json_path
from weclaw_desktop.toolkit.manifest import Manifest, load_manifest
from weclaw_desktop.toolkit.registry import ToolRegistry

SAMPLE = [
    "把 ~/Documents/报告.docx 压缩一下发到我手机",
    "my laptop feels sluggish, what's eating it?",
    "你好",
    "Remind me to call mom tomorrow at 6pm",
    "查一下明天北京的天气，然后写进待办",
    "What's 15% of 2,340?",
    "黑洞是怎么形成的？",
    "Find all PDFs in ~/Documents and zip them",
]


def requests() -> list[str]:
    here = Path(__file__).resolve()
    for parent in here.parents:
        dev = parent / "shared" / "eval" / "intent_dev.jsonl"
        if dev.is_file():
            return [json.loads(line)["text"] for line in dev.read_text(encoding="utf-8").splitlines() if line.strip()]
    return SAMPLE


def real_catalogue() -> Manifest:
    data = load_manifest(tools_json_path()).model_dump(by_alias=True, exclude_none=True)
    for entry in data["tools"].values():
        entry["enabled"] = True
    return Manifest.model_validate(data)


STEMS = "甲乙丙丁戊己庚辛壬癸"


def synthetic(n_tools: int = 200, n_intents: int = 40) -> Manifest:
    letters = "bcdfghjklmnpqrstvwxz"
    words = [f"q{letters[i // 400 % 20]}{letters[i // 20 % 20]}{letters[i % 20]}" for i in range(2000)]
    tools: dict[str, Any] = {
        "tool_search": {
            "module": "weclaw_desktop.tools.tool_search",
            "class": "ToolSearchTool",
            "actions": ["find"],
            "description": {"en": "Find tools."},
            "display": {"name": {"en": "Tool search"}},
            "always_on": True,
        }
    }
    for i in range(n_tools):
        tools[f"t{i:03d}"] = {
            "module": "weclaw_desktop.toolkit.base",
            "class": "BaseTool",
            "actions": [f"a{j}" for j in range(5)],
            "description": {"en": f"synthetic tool {i} {words[i]} {words[i + 1]}", "zh": f"合成工具{i}"},
            "display": {"name": {"en": f"T{i}"}},
        }
    names = [t for t in tools if t != "tool_search"]
    intents: dict[str, Any] = {}
    per = n_tools // n_intents
    for k in range(n_intents):
        mine = names[k * per : (k + 1) * per]
        intents[f"i{k}"] = {
            "action_phrases": {
                "en": [f"{words[k * 20 + j]} {words[k * 20 + j + 1]}" for j in range(10)],
                "zh": [f"合成{STEMS[k % 10]}{STEMS[k // 10]}动作{STEMS[j]}" for j in range(10)],
            },
            "topics": {"en": [words[1000 + k]]},
            "examples": {"en": [f"please {words[k * 20]} the {words[k * 20 + 3]} now"]},
            "tools": mine,
            "recommended": mine[:2],
            "alternative": mine[2:],
        }
    return Manifest.model_validate({"version": 1, "tools": tools, "intents": intents})


def _stats(samples: list[float]) -> tuple[float, float]:
    samples.sort()
    return statistics.median(samples), samples[min(len(samples) - 1, int(len(samples) * 0.99))]


def measure(manifest: Manifest, texts: list[str], repeat: int) -> dict[str, tuple[float, float]]:
    registry = ToolRegistry(manifest)
    exposer = ProgressiveExposer(registry)
    visible = registry.tool_names()
    for text in texts:  # warm up caches (stemmer, regexes)
        exposer.start_turn(text).for_round(visible)
    wall: list[float] = []
    cpu: list[float] = []
    for _ in range(repeat):
        for text in texts:
            c0 = time.thread_time_ns()
            t0 = time.perf_counter_ns()
            exposer.start_turn(text).for_round(visible)
            wall.append((time.perf_counter_ns() - t0) / 1000)
            cpu.append((time.thread_time_ns() - c0) / 1000)
    return {"wall": _stats(wall), "cpu": _stats(cpu)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=30)
    args = ap.parse_args()
    texts = requests()
    synth_texts = [*texts, "please qbbb the qbbf now", "qbcb qbcc and 合成丁甲动作戊", "qcbf something"]
    print(f"routing + first-round exposure, {len(texts)} requests x {args.repeat}")
    for label, manifest, batch in (
        ("real catalogue", real_catalogue(), texts),
        ("200 synthetic tools", synthetic(), synth_texts),
    ):
        res = measure(manifest, batch, args.repeat)
        figures = "  ".join(f"{clock}: median={m:6.1f} us p99={p:7.1f} us" for clock, (m, p) in res.items())
        print(f"  {label:<20} tools={len(manifest.tools):<4} {figures}")


if __name__ == "__main__":
    main()
