"""The intent engine: a request -> scored intents -> an exposure tier and the tools it needs.

Everything comes from tools.json (``intents``, tool descriptions, ``exposure``); no tool module is
imported. Per intent, three signals are combined:

- strong keywords (``keywords``): one match is enough for the high tier;
- weak keywords (``weak``): generic words ("file", "打开"); alone they reach the medium tier;
- similarity (BM25 over keywords, examples and the recommended tools' descriptions), which catches
  paraphrases; alone it reaches the medium tier at most (``exposure.similarity_weight``).

Matches combine as a noisy OR, ``1 - (1 - a)(1 - b)...``: every extra piece of evidence raises the score
and nothing divides by the number of keywords, so a big intent is never pushed down for its size.
Knowledge and how-to questions are damped, and for a writing request ("写一封道歉信", "draft a tweet")
only strong keywords count (see :mod:`cues`).

Tiers: an intent at or above ``high_threshold`` contributes its recommended tools; when the best intent
is only between the thresholds, the intents there contribute recommended + alternative (tier
"expanded"); none above ``medium_threshold`` -> tier "clarify", no domain tools. Several intents above
``medium_threshold`` expose the union (a medium one beside a high one adds its recommended tools).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from weclaw_desktop.intent.cues import CUE_LAYER, add_cues, is_composition, is_knowledge_question
from weclaw_desktop.intent.matcher import KeywordMatcher
from weclaw_desktop.intent.similarity import BM25Index
from weclaw_desktop.intent.text import keyword_units, prepare
from weclaw_desktop.toolkit.manifest import ExposureSettings, Manifest

STRONG = 0.85
WEAK = 0.4
QUESTION_DAMP = 0.3
SIMILARITY_FLOOR = 0.1
SECONDARY = 0.42

RECOMMENDED = "recommended"
EXPANDED = "expanded"
CLARIFY = "clarify"


@dataclass(slots=True)
class IntentScore:
    name: str
    score: float
    keyword: float = 0.0
    strong: float = 0.0  # the part of ``keyword`` that comes from strong keywords
    similarity: float = 0.0
    matched: list[str] = field(default_factory=list)

    @property
    def rounded(self) -> float:
        return round(self.score, 3)


@dataclass
class Route:
    tier: str
    confidence: float
    intents: list[IntentScore]  # the intents that expose tools, best first
    tools: list[str]  # domain tools in priority order, at most max_tools_per_request
    reasons: dict[str, str] = field(default_factory=dict)  # tool -> why
    question: bool = False
    candidates: list[IntentScore] = field(default_factory=list)  # every intent that scored, best first


class IntentEngine:
    def __init__(self, manifest: Manifest, *, similarity_weight: float | None = None) -> None:
        self.manifest = manifest
        self.settings: ExposureSettings = manifest.exposure
        self.similarity_weight = self.settings.similarity_weight if similarity_weight is None else similarity_weight
        self.enabled = {name for name, spec in manifest.tools.items() if spec.enabled}
        self._keywords = KeywordMatcher()
        self._index = BM25Index()
        for name, intent in manifest.intents.items():
            for phrase in intent.keywords.all():
                self._keywords.add(name, phrase, STRONG)
            for phrase in intent.weak.all():
                self._keywords.add(name, phrase, WEAK)
            texts = [*intent.keywords.all(), *intent.weak.all(), *intent.examples.all()]
            for tool in intent.recommended:
                spec = manifest.tools.get(tool)
                if spec is not None:
                    texts += [spec.description.en, spec.description.zh]
            self._index.add(name, (u for t in texts for u in keyword_units(t)))
        add_cues(self._keywords)
        self._keywords.finish()
        self._index.finish()

    def score(self, text: str) -> tuple[list[IntentScore], bool]:
        """Every intent with a score above zero, best first, and whether the text is a knowledge question."""
        prepared = prepare(text)
        found: dict[str, IntentScore] = {}
        cues: set[str] = set()
        for m in self._keywords.find(prepared.units):
            if m.keyword.layer == CUE_LAYER:
                cues.add(m.keyword.intent)
                continue
            s = found.get(m.keyword.intent)
            if s is None:
                s = found[m.keyword.intent] = IntentScore(m.keyword.intent, 0.0)
            if m.keyword.phrase not in s.matched:
                s.keyword = 1 - (1 - s.keyword) * (1 - m.keyword.weight)
                if m.keyword.weight >= STRONG:
                    s.strong = 1 - (1 - s.strong) * (1 - m.keyword.weight)
                s.matched.append(m.keyword.phrase)
        w = self.similarity_weight
        if w > 0:
            for name, sim in self._index.scores(prepared.units).items():
                s = found.get(name)
                if s is None:
                    if w * sim < SIMILARITY_FLOOR:
                        continue  # too faint to matter alone
                    s = found[name] = IntentScore(name, 0.0)
                s.similarity = sim
        question = is_knowledge_question(cues, prepared)
        damp = QUESTION_DAMP if question else 1.0
        if is_composition(cues, prepared):
            # the model writes the text itself: only an explicit tool phrase ("存成 word", "email it") counts
            for s in found.values():
                s.score = s.strong * damp
        else:
            for s in found.values():
                s.score = (1 - (1 - s.keyword) * (1 - w * s.similarity)) * damp
        ranked = sorted(found.values(), key=lambda s: -s.score)
        return ranked, question

    def route(self, text: str, enabled: Collection[str] | None = None) -> Route:
        """Route ``text``; only tools in ``enabled`` (default: enabled in tools.json) are returned."""
        allowed = self.enabled if enabled is None else enabled
        ranked, question = self.score(text)
        high, medium = self.settings.high_threshold, self.settings.medium_threshold
        chosen = [s for s in ranked if s.score >= medium]
        if chosen and chosen[0].score >= high:
            # beside a confident intent, a side intent needs more than one generic word
            chosen = chosen[:1] + [s for s in chosen[1:] if s.score >= SECONDARY]
        route = Route(tier=CLARIFY, confidence=ranked[0].score if ranked else 0.0, intents=chosen, tools=[])
        route.question, route.candidates = question, ranked
        if not chosen:
            return route
        # a medium intent is widened with its alternatives only when nothing is certain: beside a
        # high-confidence intent it is a side need, and its recommended tools are enough
        widen = chosen[0].score < high
        tiers = {s.name: RECOMMENDED if s.score >= high or not widen else EXPANDED for s in chosen}
        # recommended tools of every chosen intent first, then alternatives: the limit drops alternatives first
        for s in chosen:
            intent = self.manifest.intents[s.name]
            if any(t in allowed for t in intent.recommended):
                self._add(route, s, intent.recommended, tiers[s.name], allowed)
            else:  # none of its recommended tools is enabled: its alternatives stand in
                self._add(route, s, intent.alternative, "alternative, recommended not enabled", allowed)
        for s in chosen:
            if tiers[s.name] == EXPANDED:
                self._add(route, s, self.manifest.intents[s.name].alternative, "alternative", allowed)
        limit = self.settings.max_tools_per_request
        for tool in route.tools[limit:]:
            del route.reasons[tool]
        route.tools = route.tools[:limit]
        route.tier = EXPANDED if EXPANDED in tiers.values() else RECOMMENDED
        if not route.tools:
            route.tier = CLARIFY
        return route

    @staticmethod
    def _add(route: Route, s: IntentScore, tools: list[str], why: str, allowed: Collection[str]) -> None:
        for tool in tools:
            if tool in allowed and tool not in route.reasons:
                route.reasons[tool] = f"intent {s.name} ({s.score:.2f}, {why})"
                route.tools.append(tool)
