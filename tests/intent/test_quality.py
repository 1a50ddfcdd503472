"""Routing quality on the project's own labelled requests (written for this project; none is copied from
the shared dev set). Same metrics as ../shared/eval/score_intent.py, computed from tools.json alone with
every tool counted as enabled. A keyword-table change that loses recall or exposes tools to small talk
fails here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from weclaw_desktop.intent.engine import IntentEngine
from weclaw_desktop.toolkit.manifest import Manifest

DATA = Path(__file__).parent / "data"
SETS = ["routing_cases.jsonl", "holdout.jsonl", "holdout2.jsonl", "holdout3.jsonl"]


@pytest.mark.parametrize("name", SETS)
def test_labelled_requests_meet_the_targets_with_margin(name: str, real_manifest: Manifest) -> None:
    items = [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    engine = IntentEngine(real_manifest)
    every = set(real_manifest.tools)
    n_functions = {t: len(s.actions) for t, s in real_manifest.tools.items()}
    recalled, zero, tools, over = [], [], [], 0
    for it in items:
        route = engine.route(it["text"], every)
        exposed = set(route.tools)
        tools.append(len(exposed))
        over += sum(n_functions[t] for t in exposed) + 1 > 128
        if it["kind"] == "none":
            zero.append(not exposed)
        else:
            recalled.append(all(exposed & set(group) for group in it["expect"]))
    assert sum(recalled) / len(recalled) >= 0.95
    assert sum(zero) / len(zero) >= 0.90
    assert sum(tools) / len(tools) <= 2.0
    assert over == 0
