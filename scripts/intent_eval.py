"""In-process routing evaluation: the scorer's metrics, computed from tools.json alone.

    python scripts/intent_eval.py [--data FILE ...] [--no-similarity | --both] [--show-misses]
    python scripts/intent_eval.py --cmd "python -m weclaw_desktop" --data FILE   # through the CLI
    python scripts/intent_eval.py --tool-search [--data FILE ...]   # what tool_search recovers

Default data: the shared dev set and the project's own labelled sets under tests/intent/data/.

Labels are those of ``../shared/eval/score_intent.py`` ({"id", "text", "lang", "kind", "expect"}; a request
is recalled when every group of ``expect`` has a tool among the exposed ones; kind "none" scores when
nothing but the always-on tools is exposed), extended for conversations:

- ``history``: the earlier turns of the conversation, oldest first, each
  ``{"user": text, "assistant": text, "tools": [tools called in that turn]}``. The request is routed as the
  agent loop routes it: with the conversation context built from those turns (the previous user turn's
  text and route, what the assistant produced, the tools of the recent tool-using turns).
- ``tags``: "tempting" marks a request written to tempt keyword matching (a knowledge question or opinion
  that mentions tool words); "followup" a conversation turn. Their own rates are printed.

``--cmd`` sends the same lines, ``history`` included, to ``<cmd> intent --jsonl`` (the shared scorer sends
only ``id`` and ``text``, so it routes a follow-up as if it were the first turn).

Every tool declared in tools.json counts as enabled, and the payload is estimated as exposed functions /
all functions (the real scorer measures JSON bytes).
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from weclaw_desktop.intent.engine import IntentEngine
from weclaw_desktop.paths import tools_json_path
from weclaw_desktop.toolkit.manifest import Manifest, load_manifest

_HERE = Path(__file__).resolve()
DEFAULT_DATA = next(
    (p / "shared" / "eval" / "intent_dev.jsonl" for p in _HERE.parents if (p / "shared" / "eval").is_dir()),
    _HERE.parents[2] / "shared" / "eval" / "intent_dev.jsonl",
)

Router = Callable[[dict[str, Any]], tuple[set[str], str]]  # item -> (exposed domain tools, explanation)


def all_enabled(manifest: Manifest) -> Manifest:
    data = manifest.model_dump(by_alias=True, exclude_none=True)
    for entry in data["tools"].values():
        entry["enabled"] = True
    return Manifest.model_validate(data)


def in_process_router(engine: IntentEngine) -> Router:
    """Routes as the agent loop does: the exposer's first round for a ``TurnRequest`` that carries the
    conversation (the route decides what an earlier turn carries over, so no blanket "sticky" tools)."""
    from weclaw_desktop.intent.api import TurnRequest
    from weclaw_desktop.intent.conversation import Conversation
    from weclaw_desktop.intent.exposure import ProgressiveExposer
    from weclaw_desktop.toolkit.registry import ToolRegistry

    registry = ToolRegistry(engine.manifest)
    exposer = ProgressiveExposer(registry, engine)
    visible = registry.tool_names()
    always = {t for t in visible if registry.spec(t).always_on}

    def route(item: dict[str, Any]) -> tuple[set[str], str]:
        history = item.get("history")
        context = Conversation.from_labels(history) if history else None
        turn = exposer.start_turn(TurnRequest(item["text"], conversation=context))
        exposure = turn.for_round(visible)
        r = turn.route
        got = ", ".join(f"{s.name}:{s.score:.2f}" for s in r.candidates[:4])
        got += f" forms={r.forms}" + (f" carried={r.carried}" if r.carried else "")
        return {t for t in exposure.tools if t not in always}, got

    return route


def cli_router(cmd: str, items: list[dict[str, Any]]) -> Router:
    """Routes every item through ``<cmd> intent --jsonl`` once (history forwarded), then answers from that."""
    lines = "".join(
        json.dumps({k: it[k] for k in ("id", "text", "history") if k in it}, ensure_ascii=False) + "\n" for it in items
    )
    proc = subprocess.run(
        [*shlex.split(cmd), "intent", "--jsonl"], input=lines, capture_output=True, text=True, encoding="utf-8"
    )
    if proc.returncode != 0:
        sys.exit(f"{cmd} intent --jsonl exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    rows = {json.dumps(r["id"]): r for r in map(json.loads, proc.stdout.splitlines())}

    def route(item: dict[str, Any]) -> tuple[set[str], str]:
        row = rows[json.dumps(item["id"])]
        return set(row["tools"]), ", ".join(f"{i['name']}:{i['score']:.2f}" for i in row["intents"])

    return route


def evaluate(
    manifest: Manifest, router: Router, items: list[dict[str, Any]], show_misses: bool
) -> dict[str, float | int]:
    always = [t for t, s in manifest.tools.items() if s.always_on]
    n_fn = {t: len(s.actions) for t, s in manifest.tools.items()}
    total_fn = sum(n_fn.values())
    per_kind: dict[str, list[float]] = defaultdict(list)
    per_tag: dict[str, list[float]] = defaultdict(list)
    tools_n, ratios = [], []
    over = 0
    for it in items:
        exposed, got = router(it)
        fns = sum(n_fn[t] for t in [*exposed, *always])
        over += fns > 128
        tools_n.append(len(exposed))
        ratios.append(fns / total_fn)
        none = it["kind"] == "none"
        ok = not exposed if none else all(exposed & set(g) for g in it["expect"])
        per_kind[it["kind"]].append(float(ok))
        tags = set(it.get("tags", []))
        if "history" in it:
            tags.add("followup")
        for tag in tags:
            per_tag[f"{tag}_{'none' if none else 'tools'}"].append(float(ok))
        if show_misses and not ok:
            ctx = f" (after {len(it['history'])} turns)" if it.get("history") else ""
            print(
                f"  MISS {it['id']} {it['kind']:<10}{ctx} {it['text']!r}\n"
                f"       want {it['expect']} got {sorted(exposed)} [{got}]"
            )
    tool_scores = [v for k, vs in per_kind.items() if k != "none" for v in vs]
    out: dict[str, float | int] = {f"{k}": statistics.mean(v) for k, v in sorted(per_kind.items())}
    out.update({f"{k}": statistics.mean(v) for k, v in sorted(per_tag.items())})
    out.update(
        recall=statistics.mean(tool_scores) if tool_scores else 0.0,
        none_zero=statistics.mean(per_kind["none"]) if per_kind["none"] else 1.0,
        mean_tools=statistics.mean(tools_n),
        payload_fn_ratio=statistics.mean(ratios),
        over_cap=over,
    )
    return out


def tool_search_report(engine: IntentEngine, items: list[dict[str, Any]]) -> dict[str, float | int]:
    """How often the model would need ``tool_search`` (a needed tool was not exposed), and whether
    ``tool_search`` fed the user's own words finds it among its results; also tool_search alone over every
    tool request (as if routing had exposed nothing), with and without the engine's opinion."""
    from weclaw_desktop.intent.index import MIN_SCORE, ToolIndex
    from weclaw_desktop.toolkit.registry import ToolRegistry

    registry = ToolRegistry(engine.manifest)
    index = ToolIndex(registry, engine)
    limit = engine.manifest.exposure.search_results
    router = in_process_router(engine)
    needed = recovered = alone = alone_own = n = 0
    for it in items:
        if it["kind"] == "none":
            continue
        n += 1
        exposed, _ = router(it)
        found = {h.name for h in index.find(it["text"])}
        sims = index.similarity(it["text"])
        own = {t for t in sorted(sims, key=lambda t: -sims[t])[:limit] if sims[t] >= MIN_SCORE}
        missing = [g for g in it["expect"] if not exposed & set(g)]
        if missing:
            needed += 1
            recovered += all(found & set(g) for g in missing)
        alone += all(found & set(g) for g in it["expect"])
        alone_own += all(own & set(g) for g in it["expect"])
    return {
        "tool_requests": n,
        "misses_needing_tool_search": needed,
        "recovered_by_tool_search": recovered,
        "tool_search_alone_recall": alone / n if n else 0.0,
        "own_similarity_alone_recall": alone_own / n if n else 0.0,
    }


def timing(router: Router, items: list[dict[str, Any]], repeat: int = 20) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        for it in items:
            router(it)
    return (time.perf_counter() - start) / (repeat * len(items)) * 1e6


def load(path: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def main() -> None:
    ap = argparse.ArgumentParser()
    own = sorted((Path(__file__).resolve().parents[1] / "tests" / "intent" / "data").glob("*.jsonl"))
    ap.add_argument("--data", nargs="*", default=[str(p) for p in [DEFAULT_DATA, *own] if p.is_file()])
    ap.add_argument("--tools", default=str(tools_json_path()))
    ap.add_argument("--no-similarity", action="store_true")
    ap.add_argument("--both", action="store_true", help="report with and without the similarity signal")
    ap.add_argument("--show-misses", action="store_true")
    ap.add_argument("--cmd", help='route through "<cmd> intent --jsonl" instead of in process')
    ap.add_argument("--tool-search", action="store_true", help="report what tool_search recovers of the misses")
    args = ap.parse_args()
    manifest = all_enabled(load_manifest(args.tools))
    weights = [None, 0.0] if args.both else [0.0 if args.no_similarity else None]
    for path in args.data:
        items = load(path)
        if args.tool_search:
            res = tool_search_report(IntentEngine(manifest), items)
            print(f"{Path(path).name} ({len(items)} requests): tool_search")
            print("  " + "  ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in res.items()))
            continue
        if args.cmd:
            print(f"{Path(path).name} ({len(items)} requests, through {args.cmd})")
            res = evaluate(manifest, cli_router(args.cmd, items), items, args.show_misses)
            print("  " + "  ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in res.items()))
            continue
        for w in weights:
            engine = IntentEngine(manifest, similarity_weight=w)
            label = "similarity off" if w == 0.0 else f"similarity {engine.similarity_weight}"
            print(f"{Path(path).name} ({len(items)} requests, {label})")
            router = in_process_router(engine)
            res = evaluate(manifest, router, items, args.show_misses)
            res["us_per_request"] = timing(router, items)
            print("  " + "  ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in res.items()))


if __name__ == "__main__":
    main()
