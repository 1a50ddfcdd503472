"""``weclaw intent``: how a request is routed, readably or as JSON lines for the evaluation script.

It routes as the GUI would with every bridge connected, independent of this machine's configuration:
every tool enabled in tools.json counts as visible (availability is not routing's business).

    weclaw intent "把报告压缩一下发到我手机"
    weclaw intent --after "write a python function for fib" "run it for n=30"   # a follow-up
    weclaw intent --jsonl < requests.jsonl      # {"id", "text"} per line -> one route per line, same order

A batch line may carry the conversation before it: ``"history": [{"user", "assistant", "tools"}, ...]``
(oldest first); the request is then routed as the agent loop routes a follow-up, with that context.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from weclaw_desktop.commands.common import manifest_or_exit
from weclaw_desktop.intent.api import TurnRequest
from weclaw_desktop.intent.conversation import Conversation, Turn
from weclaw_desktop.intent.engine import IntentEngine
from weclaw_desktop.intent.exposure import ProgressiveExposer
from weclaw_desktop.toolkit.registry import ToolRegistry


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("intent", help="show how a request is routed to tools")
    p.add_argument("text", nargs="*", help="the request (omit with --jsonl)")
    p.add_argument("--jsonl", action="store_true", help='read {"id", "text"} lines from stdin, write routes')
    p.add_argument("--tools", help="path of tools.json (default: the bundled one)")
    p.add_argument("--no-similarity", action="store_true", help="keywords only (to measure the similarity signal)")
    p.add_argument(
        "--after",
        action="append",
        default=[],
        metavar="EARLIER",
        help="an earlier user turn of the conversation (repeatable, oldest first): route TEXT as its follow-up",
    )
    p.set_defaults(run=run)


class _Router:
    def __init__(self, registry: ToolRegistry, similarity: bool) -> None:
        engine = IntentEngine(registry.manifest, similarity_weight=None if similarity else 0.0)
        self.exposer = ProgressiveExposer(registry, engine)
        self.registry = registry
        self.visible = registry.tool_names()
        self.always = {t for t in self.visible if registry.spec(t).always_on}

    def route(self, text: str, *, detail: bool = True, context: Conversation | None = None) -> dict[str, Any]:
        turn = self.exposer.start_turn(TurnRequest(text, conversation=context))
        route = turn.route
        exposure = turn.for_round(self.visible)
        out: dict[str, Any] = {
            "tier": exposure.tier,
            "confidence": exposure.confidence,
            "intents": [{"name": s.name, "score": s.rounded} for s in route.intents],
            "tools": [t for t in exposure.tools if t not in self.always],
            "always_on": [t for t in exposure.tools if t in self.always],
            "functions": [f for t in exposure.tools for f in self.registry.functions_of(t)],
        }
        if detail:
            out["reasons"] = exposure.reasons
            out["question"] = route.question
            out["forms"] = route.forms
            out["carried"] = route.carried
            out["candidates"] = [
                {
                    "name": s.name,
                    "score": s.rounded,
                    "keywords": s.matched,
                    "similarity": round(s.similarity, 3),
                    "form": s.form,
                }
                for s in route.candidates[:5]
            ]
        return out


def run(args: argparse.Namespace) -> int:
    registry = ToolRegistry(manifest_or_exit(args.tools))
    router = _Router(registry, similarity=not args.no_similarity)
    if args.jsonl:
        return _batch(router, sys.stdin, sys.stdout)
    text = " ".join(args.text).strip()
    if not text:
        print(
            'error: give a request, e.g. weclaw intent "send the report to my phone", or use --jsonl', file=sys.stderr
        )
        return 2
    context = None
    if args.after:  # each earlier turn is taken to have used the tools it routes to
        turns: list[Turn] = []
        for earlier in args.after:
            before = Conversation(list(turns))
            tools = router.exposer.engine.route(earlier, router.visible, context=before).tools
            turns.append(Turn(user=earlier, tools=tuple(tools)))
        context = Conversation(turns)
    _print_readable(text, router.route(text, context=context))
    return 0


def _batch(router: _Router, stdin: TextIO, stdout: TextIO) -> int:
    """One output line per non-empty input line, in order; a bad line gets an error row (exit status 1)."""
    bad = 0
    for n, line in enumerate(stdin, 1):
        if not line.strip():
            continue
        item: Any = None
        try:
            item = json.loads(line)
            text = item.get("text") if isinstance(item, dict) else None
            if not isinstance(text, str):
                raise TypeError("no 'text' string")
            context = _context(item.get("history"))
        except (ValueError, TypeError) as exc:
            bad += 1
            message = f'line {n}: expected {{"id": ..., "text": "..."}}: {exc}'
            print(message, file=sys.stderr)
            rid = item.get("id") if isinstance(item, dict) else None
            row: dict[str, Any] = {"id": rid, "error": message, **_EMPTY}
        else:
            row = {"id": item.get("id"), **router.route(text, detail=False, context=context)}
        stdout.write(_ENCODER.encode(row) + "\n")
    stdout.flush()
    return 1 if bad else 0


def _context(history: Any) -> Conversation | None:
    """The ``history`` of a batch line: a list of {"user", "assistant", "tools"} objects, oldest first."""
    if history is None:
        return None
    if not isinstance(history, list) or not all(
        isinstance(h, dict)
        and isinstance(h.get("user", ""), str)
        and isinstance(h.get("assistant", ""), str)
        and isinstance(h.get("tools", []), list)
        and all(isinstance(t, str) for t in h.get("tools", []))
        for h in history
    ):
        raise TypeError('\'history\' must be a list of {"user": str, "assistant": str, "tools": [str]}')
    return Conversation.from_labels(history)


_ENCODER = json.JSONEncoder(ensure_ascii=False)
_EMPTY: dict[str, Any] = {
    "tier": "clarify",
    "confidence": 0.0,
    "intents": [],
    "tools": [],
    "always_on": [],
    "functions": [],
}


def _print_readable(text: str, r: dict[str, Any]) -> None:
    print(f"request:    {text}")
    print(
        f"tier:       {r['tier']}  (confidence {r['confidence']:.2f}{', knowledge question' if r['question'] else ''})"
    )
    intents = ", ".join(f"{i['name']} {i['score']:.2f}" for i in r["intents"]) or "none"
    print(f"intents:    {intents}")
    print(f"clauses:    {', '.join(r['forms']) or '-'}")
    if r["carried"]:
        print(f"carried:    {', '.join(r['carried'])} (from an earlier turn)")
    print(f"tools:      {', '.join(r['tools']) or 'none (the model answers or asks)'}")
    print(f"always on:  {', '.join(r['always_on']) or 'none'}")
    print(f"functions:  {len(r['functions'])}")
    for tool, why in r["reasons"].items():
        print(f"  {tool:<18} {why}")
    if r["candidates"]:
        print("scores:")
        for c in r["candidates"]:
            kws = ", ".join(c["keywords"]) or "-"
            print(
                f"  {c['name']:<10} {c['score']:.2f}  keywords: {kws}  similarity: {c['similarity']:.2f}  "
                f"({c['form']} clause)"
            )
