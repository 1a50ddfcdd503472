"""The intent engine: a request -> scored intents -> an exposure tier and the tools it needs.

Everything comes from tools.json (``intents``, tool descriptions, ``exposure``); no tool module is
imported. A request is prepared (payloads masked, cut into clauses, see :mod:`text`), each clause gets a
sentence form (:mod:`forms`), and per intent and clause three signals are combined:

- action phrases (``action_phrases``: "remind me", "压缩成", "send * to my phone"): one is enough for the
  high tier;
- topic words (``topics``: "python", "邮件", "battery"): they name the domain; alone they reach the medium
  tier at most, and in a question or a writing request they do not count;
- similarity (BM25 over the phrases, examples and the recommended tools' descriptions), which catches
  paraphrases; alone it reaches the medium tier at most (``exposure.similarity_weight``).

Matches combine as a noisy OR, ``1 - (1 - a)(1 - b)...``: every extra piece of evidence raises the score
and nothing divides by the number of keywords, so a big intent is never pushed down for its size. The
clause's form then weighs the evidence (a knowledge question routes nothing, a negated clause nothing, a
writing request only action phrases; see :mod:`forms` for the table). An intent's score is its best clause.

Tiers: an intent at or above ``high_threshold`` contributes its recommended tools; when the best intent
is only between the thresholds, the intents there contribute recommended + alternative (tier
"expanded"); none above ``medium_threshold`` -> tier "clarify", no domain tools. Beside a confident
intent a side intent needs ``SECONDARY`` — unless it is the best intent of a clause of its own ("…, and
remind me at 3").

With a :class:`~weclaw_desktop.intent.conversation.Conversation`, words that stand for the previous turn's
result are resolved to it, and a follow-up that repeats a need or routes to nothing of its own gets the
tools of the earlier turn it refers to (``Route.carried``). A turn of thanks gets nothing.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from weclaw_desktop.intent import conversation, cues, forms
from weclaw_desktop.intent.cues import CUE_LAYERS, add_cues
from weclaw_desktop.intent.matcher import KeywordMatcher, Match
from weclaw_desktop.intent.similarity import STOP_EN, BM25Index
from weclaw_desktop.intent.text import Prepared, keyword_units, prepare, stem
from weclaw_desktop.intent.typos import TypoIndex
from weclaw_desktop.toolkit.manifest import ExposureSettings, Manifest

STRONG = 0.85  # an action phrase
WEAK = 0.4  # a topic word
QUESTION_DAMP = forms.DAMP
SIMILARITY_FLOOR = 0.1
SECONDARY = 0.42

RECOMMENDED = "recommended"
EXPANDED = "expanded"
CLARIFY = "clarify"
FOLLOW_UP = "follow-up"

_TOPIC_LAYER = 0  # action phrases and topic words share a layer: the longer phrase wins
_CONTENT = frozenset({"‹draft›", "‹text›", "‹pycode›", "‹code›"})  # what the assistant wrote itself


@dataclass(slots=True)
class IntentScore:
    name: str
    score: float
    keyword: float = 0.0  # action phrases and topic words combined (best clause)
    strong: float = 0.0  # the part of ``keyword`` that comes from action phrases
    similarity: float = 0.0
    matched: list[str] = field(default_factory=list)
    clause: int = 0  # index of the clause that gave the score
    form: str = forms.REQUEST  # that clause's form

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
    question: bool = False  # every clause is a question the model answers itself
    candidates: list[IntentScore] = field(default_factory=list)  # every intent that scored, best first
    forms: list[str] = field(default_factory=list)  # the form of each clause
    carried: list[str] = field(default_factory=list)  # tools carried over from an earlier turn
    social: bool = False  # thanks / greeting only


class _Evidence:
    __slots__ = ("action", "matched", "topic")

    def __init__(self) -> None:
        self.action = 0.0  # action phrases, noisy OR
        self.topic = 0.0  # topic words, noisy OR
        self.matched: list[str] = []


class IntentEngine:
    def __init__(self, manifest: Manifest, *, similarity_weight: float | None = None) -> None:
        self.manifest = manifest
        self.settings: ExposureSettings = manifest.exposure
        self.similarity_weight = self.settings.similarity_weight if similarity_weight is None else similarity_weight
        self.enabled = {name for name, spec in manifest.tools.items() if spec.enabled}
        self._keywords = KeywordMatcher()
        self._index = BM25Index()
        for name, intent in manifest.intents.items():
            for phrase in intent.action_phrases.all():
                self._keywords.add(name, phrase, STRONG, _TOPIC_LAYER)
            for phrase in intent.topics.all():
                self._keywords.add(name, phrase, WEAK, _TOPIC_LAYER)
            texts = [*intent.action_phrases.all(), *intent.topics.all(), *intent.examples.all()]
            for tool in intent.recommended:
                spec = manifest.tools.get(tool)
                if spec is not None:
                    texts += [spec.description.en, spec.description.zh]
            self._index.add(name, (u for t in texts for u in keyword_units(t)))
        add_cues(self._keywords)
        self._keywords.finish()
        self._index.finish()
        # everyday words are known too: "thanks" must not become "think"
        everyday = {stem(w) for w in (*cues.SOCIAL_EN, *cues.CONFIRM, *cues.NEGATION_LEAD)} | set(STOP_EN)
        self._typos = TypoIndex(self._keywords.vocabulary(), known=everyday)
        self._pairs = self._keywords.pairs()

    # --- scoring ------------------------------------------------------------------------------------
    def analyse(
        self, text: str, context: conversation.Conversation | None = None, *, lazy: bool = False
    ) -> tuple[Prepared, list[Match], forms.Analysis | None]:
        """The prepared request (earlier results resolved), its intent matches and its clause forms.
        ``lazy``: skip the forms (None) when nothing could route — no keyword and no similarity worth a
        score, and no conversation that needs to know whether this is a "thanks"."""
        prepared = prepare(text)
        self._typos.correct(prepared.units)
        if context is not None:
            conversation.resolve(prepared, context.referent(), self._pairs)
        found = self._keywords.find(prepared.units)
        intent_matches = [m for m in found if m.keyword.layer not in CUE_LAYERS]
        if lazy and not intent_matches and context is None and not self._similar(prepared.units):
            return prepared, intent_matches, None
        cue_matches = [m for m in found if m.keyword.layer in CUE_LAYERS]
        actions = [m for m in intent_matches if m.keyword.weight >= STRONG]
        editing = context is not None and bool(_CONTENT.intersection(context.referent()))
        analysis = forms.analyse(prepared, cue_matches, actions, editing=editing, phrases=intent_matches)
        return prepared, intent_matches, analysis

    def _similar(self, units: list[str]) -> bool:
        """Some intent is similar enough to the whole request to score."""
        w = self.similarity_weight
        return w > 0 and any(w * sim >= SIMILARITY_FLOOR for sim in self._index.scores(units).values())

    def score(self, text: str, context: conversation.Conversation | None = None) -> tuple[list[IntentScore], bool]:
        """Every intent with a score above zero, best first, and whether the request is only questions the
        model answers itself."""
        ranked, analysis, _ = self._score(text, context, lazy=False)
        return ranked, analysis.question

    def _score(
        self, text: str, context: conversation.Conversation | None, *, lazy: bool = True
    ) -> tuple[list[IntentScore], forms.Analysis, Prepared]:
        prepared, matches, maybe = self.analyse(text, context, lazy=lazy)
        if maybe is None:  # nothing to score: small talk, or a catalogue that knows none of these words
            return [], forms.Analysis(forms=[], social=forms.all_social(prepared)), prepared
        analysis = maybe
        clause_forms = analysis.forms
        n = len(clause_forms)
        evidence: list[dict[str, _Evidence]] = [{} for _ in range(n)]  # per clause, per intent
        ends = [f.end for f in clause_forms]
        for m in matches:
            k = 0
            while k < n - 1 and m.start >= ends[k]:
                k += 1
            subject = clause_forms[k].subject_from
            if 0 <= subject <= m.start and clause_forms[k].kind == forms.COMPOSE:
                continue  # "写一首关于截图的诗": the writing's subject, not something to do
            phrase = m.keyword.phrase
            ev = evidence[k].get(m.keyword.intent)
            if ev is None:
                ev = evidence[k][m.keyword.intent] = _Evidence()
            elif phrase in ev.matched:
                continue
            ev.matched.append(phrase)
            weight = m.keyword.weight
            if weight >= STRONG:
                ev.action = 1 - (1 - ev.action) * (1 - weight)
            else:
                ev.topic = 1 - (1 - ev.topic) * (1 - weight)
        w = self.similarity_weight
        best: dict[str, tuple[float, int, float, float, float, list[str]]] = {}
        no_evidence = _Evidence()
        for k, f in enumerate(clause_forms):
            wt = f.weights
            ev_k = evidence[k]
            sims: dict[str, float] = {}
            # similarity alone cannot route in a damped clause (0.5 x 0.3 < the medium threshold): skip it there
            if w > 0 and wt.similarity > 0 and wt.total == 1.0 and f.end > f.start:
                sims = self._index.scores(prepared.units[f.start : f.end])
            ws = wt.similarity * w
            items = list(ev_k.items())
            items += [(d, no_evidence) for d, sim in sims.items() if d not in ev_k and w * sim >= SIMILARITY_FLOOR]
            for name, ev in items:
                sim = sims.get(name, 0.0)
                keyword = 1 - (1 - wt.action * ev.action) * (1 - wt.topic * ev.topic)
                score = (1 - (1 - keyword) * (1 - ws * sim)) * wt.total
                old = best.get(name)
                if old is None or score > old[0]:
                    best[name] = (score, k, ev.action, ev.topic, sim, ev.matched)
        ranked = [
            IntentScore(
                name,
                score,
                keyword=1 - (1 - action) * (1 - topic),
                strong=action,
                similarity=sim,
                matched=matched,
                clause=k,
                form=clause_forms[k].kind,
            )
            for name, (score, k, action, topic, sim, matched) in best.items()
            if score > 0 or action > 0 or topic > 0
        ]
        ranked.sort(key=lambda s: (-s.score, s.name))
        return ranked, analysis, prepared

    # --- routing ------------------------------------------------------------------------------------
    def route(
        self,
        text: str,
        enabled: Collection[str] | None = None,
        context: conversation.Conversation | None = None,
    ) -> Route:
        """Route ``text``; only tools in ``enabled`` (default: enabled in tools.json) are returned.
        ``context``: the earlier turns of the conversation, for follow-ups."""
        allowed = self.enabled if enabled is None else enabled
        if context is not None:
            offer = context.offer()
            if offer and conversation.confirms(prepare(text)):
                # "yes please" to "Want me to zip ~/logs?": the offer is the request
                route = self.route(offer, enabled)
                for tool in route.tools:
                    route.reasons[tool] = f"{FOLLOW_UP}: yes to the offer '{offer[:60]}' ({route.reasons[tool]})"
                route.carried = list(route.tools)
                return route
        ranked, analysis, prepared = self._score(text, context)
        high, medium = self.settings.high_threshold, self.settings.medium_threshold
        chosen = [s for s in ranked if s.score >= medium]
        if chosen and chosen[0].score >= high:
            # beside a confident intent, a side intent needs more than one generic word — unless an
            # action phrase makes it the best of a clause of its own ("zip the logs, and remind me at 3")
            clause_best: dict[int, str] = {}
            for s in chosen:
                clause_best.setdefault(s.clause, s.name)
            chosen = chosen[:1] + [
                s for s in chosen[1:] if s.score >= SECONDARY or (clause_best[s.clause] == s.name and s.strong > 0)
            ]
        route = Route(tier=CLARIFY, confidence=ranked[0].score if ranked else 0.0, intents=chosen, tools=[])
        route.question, route.candidates = analysis.question, ranked
        route.forms = [f.kind for f in analysis.forms]
        route.social = analysis.social
        if chosen:
            self._expose(route, chosen, allowed)
        if context is not None and not analysis.social:
            self._carry(route, analysis, prepared, context, allowed)
        limit = self.settings.max_tools_per_request
        for tool in route.tools[limit:]:
            del route.reasons[tool]
        route.tools = route.tools[:limit]
        route.carried = [t for t in route.carried if t in route.reasons]
        if not route.tools:
            route.tier = CLARIFY
        return route

    def _expose(self, route: Route, chosen: list[IntentScore], allowed: Collection[str]) -> None:
        high = self.settings.high_threshold
        # a medium intent is widened with its alternatives only when nothing is certain: beside a
        # high-confidence intent it is a side need, and its recommended tools are enough
        widen = chosen[0].score < high
        tiers = {s.name: RECOMMENDED if s.score >= high or not widen else EXPANDED for s in chosen}
        # recommended tools of every chosen intent first, then alternatives: the limit drops alternatives first
        for s in chosen:
            intent = self.manifest.intents[s.name]
            if any(t in allowed for t in intent.recommended):
                _add(route, intent.recommended, f"intent {s.name} ({s.score:.2f}, {tiers[s.name]})", allowed)
            else:  # none of its recommended tools is enabled: its alternatives stand in
                why = f"intent {s.name} ({s.score:.2f}, alternative, recommended not enabled)"
                _add(route, intent.alternative, why, allowed)
        for s in chosen:
            if tiers[s.name] == EXPANDED:
                _add(
                    route,
                    self.manifest.intents[s.name].alternative,
                    f"intent {s.name} ({s.score:.2f}, alternative)",
                    allowed,
                )
        route.tier = EXPANDED if EXPANDED in tiers.values() else RECOMMENDED

    def _carry(
        self,
        route: Route,
        analysis: forms.Analysis,
        prepared: Prepared,
        context: conversation.Conversation,
        allowed: Collection[str],
    ) -> None:
        """A follow-up gets the tools of the earlier turn it refers to when it repeats a need ("again", "the
        same"), when it routes to nothing of its own and is not a question, a writing request or a negation
        ("actually make it the 2nd", "那后天呢"), or when nothing of its own is certain and it shares words
        with that turn ("move the mom thing to six" after "remind me to call mom")."""
        answered = {forms.KNOWLEDGE, forms.ADVICE, forms.COMPOSE, forms.EDITING, forms.NEGATED, forms.SOCIAL}
        if all(f.kind in answered for f in analysis.forms) and not analysis.cont:
            return
        turn, shared = context.referred_turn(prepared)
        if turn is None:
            return
        unsure = not route.intents or route.intents[0].score < self.settings.high_threshold
        if not (analysis.cont or not route.intents or (unsure and shared > 0)):
            return
        before = len(route.tools)
        back = next(i for i, t in enumerate(context.tool_turns(), 1) if t is turn)
        _add(route, list(turn.tools), f"{FOLLOW_UP}: used {back} tool turn(s) back", allowed)
        route.carried = route.tools[before:]
        if route.carried and route.tier == CLARIFY:
            route.tier = RECOMMENDED


def _add(route: Route, tools: list[str], why: str, allowed: Collection[str]) -> None:
    for tool in tools:
        if tool in allowed and tool not in route.reasons:
            route.reasons[tool] = why
            route.tools.append(tool)
