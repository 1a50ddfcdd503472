"""Routing quality on labelled requests that were never tuned on (see tests/intent/data/README.md for the blind
protocol). Same metrics as ../shared/eval/score_intent.py, computed from tools.json alone with every tool
counted as enabled; conversation turns are routed with their history, as the agent loop routes them.

What must survive: a keyword-table or engine change that loses recall, exposes tools to questions the model
answers itself, or forgets the conversation fails here — on requests nobody tuned the engine on. The
floors sit a little under each set's first run (blind5: recall 0.966, none 0.893, tempting 0.882,
follow-ups 1.000; blind6: recall 0.976, none 0.930, tempting 0.892, follow-ups 0.950). Sets that were
tuned on are reported by scripts/intent_eval.py, never gated: a floor on a tuned set measures memory, not routing. Never tune on these sets; write a new one for the next round.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from weclaw_desktop.intent.api import TurnRequest
from weclaw_desktop.intent.conversation import Conversation
from weclaw_desktop.intent.engine import IntentEngine
from weclaw_desktop.intent.exposure import ProgressiveExposer
from weclaw_desktop.toolkit.manifest import Manifest
from weclaw_desktop.toolkit.registry import ToolRegistry

DATA = Path(__file__).parent / "data"


@dataclass(frozen=True)
class Floors:
    recall: float
    none: float
    tempting: float | None = None
    followups: float | None = None
    mean_tools: float = 2.0


# name -> floors; first runs in tests/intent/data/README.md
NEVER_TUNED = {
    "blind5.jsonl": Floors(recall=0.95, none=0.87, tempting=0.85, followups=0.95),
    "blind6.jsonl": Floors(recall=0.96, none=0.91, tempting=0.86, followups=0.94),
    "holdout11.jsonl": Floors(recall=0.92, none=0.95),
    "holdout7.jsonl": Floors(recall=0.95, none=0.90),
}


def _rate(values: list[bool]) -> float:
    return sum(values) / len(values)


@pytest.mark.parametrize("name", sorted(NEVER_TUNED))
def test_never_tuned_requests_meet_their_floors(name: str, real_manifest: Manifest) -> None:
    floors = NEVER_TUNED[name]
    items: list[dict[str, Any]] = [
        json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    registry = ToolRegistry(real_manifest)
    exposer = ProgressiveExposer(registry, IntentEngine(real_manifest))
    visible = registry.tool_names()
    always = {t for t in visible if registry.spec(t).always_on}
    n_functions = {t: len(s.actions) for t, s in real_manifest.tools.items()}
    recalled, zero, tempting, followups, tools, over = [], [], [], [], [], 0
    for it in items:
        history = it.get("history")
        context = Conversation.from_labels(history) if history else None
        turn = exposer.start_turn(TurnRequest(it["text"], conversation=context))
        exposed = {t for t in turn.for_round(visible).tools if t not in always}
        tools.append(len(exposed))
        over += sum(n_functions[t] for t in exposed) + len(always) > 128
        if it["kind"] == "none":
            ok = not exposed
            zero.append(ok)
            if "tempting" in it.get("tags", []):
                tempting.append(ok)
        else:
            ok = all(exposed & set(group) for group in it["expect"])
            recalled.append(ok)
            if history:
                followups.append(ok)
    assert _rate(recalled) >= floors.recall
    assert _rate(zero) >= floors.none
    if floors.tempting is not None:
        assert _rate(tempting) >= floors.tempting
    if floors.followups is not None:
        assert _rate(followups) >= floors.followups
    assert sum(tools) / len(tools) <= floors.mean_tools
    assert over == 0
