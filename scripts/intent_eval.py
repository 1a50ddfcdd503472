"""In-process routing evaluation: the scorer's metrics, computed from tools.json alone.

    python scripts/intent_eval.py [--data FILE ...] [--no-similarity | --both] [--show-misses]

Default data: the shared dev set and the project's own labelled sets under tests/intent/data/.

Same labels and metrics as ``../shared/eval/score_intent.py`` (recall per kind, zero-tool rate, mean tools,
requests over 128 functions), but it needs no tool module: every tool declared in tools.json counts as
enabled, and the payload is estimated as exposed functions / all functions (the real scorer measures
JSON bytes). Use it while tools are still being built; run the real scorer once they are enabled.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from weclaw_desktop.intent.engine import IntentEngine
from weclaw_desktop.paths import tools_json_path
from weclaw_desktop.toolkit.manifest import load_manifest

_HERE = Path(__file__).resolve()
DEFAULT_DATA = next(
    (p / "shared" / "eval" / "intent_dev.jsonl" for p in _HERE.parents if (p / "shared" / "eval").is_dir()),
    _HERE.parents[2] / "shared" / "eval" / "intent_dev.jsonl",
)


def evaluate(engine: IntentEngine, items: list[dict], show_misses: bool) -> dict[str, float]:
    manifest = engine.manifest
    every = set(manifest.tools)
    always = [t for t, s in manifest.tools.items() if s.always_on]
    n_fn = {t: len(s.actions) for t, s in manifest.tools.items()}
    total_fn = sum(n_fn.values())
    per_kind: dict[str, list[float]] = defaultdict(list)
    tools_n, ratios = [], []
    over = 0
    for it in items:
        route = engine.route(it["text"], every)
        exposed = set(route.tools)
        fns = sum(n_fn[t] for t in [*route.tools, *always])
        over += fns > 128
        tools_n.append(len(exposed))
        ratios.append(fns / total_fn)
        ok = not exposed if it["kind"] == "none" else all(exposed & set(g) for g in it["expect"])
        per_kind[it["kind"]].append(float(ok))
        if show_misses and not ok:
            got = ", ".join(f"{s.name}:{s.score:.2f}" for s in route.candidates[:4])
            print(
                f"  MISS {it['id']} {it['kind']:<10} {it['text']}\n       want {it['expect']} got {sorted(exposed)} [{got}]"
            )
    texts = [it["text"] for it in items]
    start = time.perf_counter()
    for _ in range(20):
        for t in texts:
            engine.route(t, every)
    us = (time.perf_counter() - start) / (20 * len(texts)) * 1e6
    tool_scores = [v for k, vs in per_kind.items() if k != "none" for v in vs]
    out = {f"{k}": statistics.mean(v) for k, v in sorted(per_kind.items())}
    out.update(
        recall=statistics.mean(tool_scores) if tool_scores else 0.0,
        none_zero=statistics.mean(per_kind["none"]) if per_kind["none"] else 1.0,
        mean_tools=statistics.mean(tools_n),
        payload_fn_ratio=statistics.mean(ratios),
        over_cap=over,
        us_per_request=us,
    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    own = sorted((Path(__file__).resolve().parents[1] / "tests" / "intent" / "data").glob("*.jsonl"))
    ap.add_argument("--data", nargs="*", default=[str(p) for p in [DEFAULT_DATA, *own] if p.is_file()])
    ap.add_argument("--tools", default=str(tools_json_path()))
    ap.add_argument("--no-similarity", action="store_true")
    ap.add_argument("--both", action="store_true", help="report with and without the similarity signal")
    ap.add_argument("--show-misses", action="store_true")
    args = ap.parse_args()
    manifest = load_manifest(args.tools)
    weights = [None, 0.0] if args.both else [0.0 if args.no_similarity else None]
    for path in args.data:
        items = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
        for w in weights:
            engine = IntentEngine(manifest, similarity_weight=w)
            label = "similarity off" if w == 0.0 else f"similarity {engine.similarity_weight}"
            print(f"{Path(path).name} ({len(items)} requests, {label})")
            res = evaluate(engine, items, args.show_misses)
            print("  " + "  ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in res.items()))


if __name__ == "__main__":
    main()
