"""Sentence form, clause by clause: is the user asking for something done on their things, asking the model
a question about the world, asking it to write, or saying not to do something?

Each clause of a request (see :func:`text.clauses_of`) gets one :class:`Form`, which says how much each kind
of evidence counts there:

========== =============================================== ====== ===== ========== =====
form       example                                         action topic similarity total
========== =============================================== ====== ===== ========== =====
request    "zip the logs", "can you check my battery"      1      1     1          1
knowledge  "what does the tar command do", "docker和虚拟机有什么区别"  1  1  1       0.3
advice     "should I use markdown or word", "…好用吗"        1      1     1          0.3
yes/no     "Is SMTP used for sending mail?", "手机连上了吗"   1      0.3   0.3        1
compose    "write a poem about reminders", "写一段文案"       1      0     0          1
negated    "先别运行", "don't send it yet"                  0      0     0          0
social     "thanks!", "好的谢谢"                           0      0     0          0
========== =============================================== ====== ===== ========== =====

So in a knowledge or advice question nothing routes: a strong action phrase scores 0.85 x 0.3 = 0.26,
under the medium threshold (0.30); it stays among the candidates, for ``weclaw intent`` to show. In a
yes/no question an action phrase routes ("will it rain tomorrow", "is my phone connected") but topic
words and loose similarity do not. A writing request routes only on an action phrase ("存成 word", "email
it"). A negated or deferred clause routes nothing, and a turn made only of thanks routes nothing at all.

A question stops being about the world, and counts as a request, when it is about the user's own things:

- a path, a web address or an e-mail address in the clause (``concrete``);
- a deictic word that *points at something tools act on*: "my"/"this"/"我的"/"这个" within a few units of an
  object (the screen, the clipboard, this computer, a file or folder, a file kind, the phone, reminders,
  an earlier result); "give me", "my boss" or "this idea" point at nothing a tool acts on;
- an object followed by a locative ("剪贴板里", "桌面上") or after one ("what's on the screen");
- the present ("today", "latest", "现在"): the model's knowledge is out of date;
- an action verb before the question words: "google how to fix this", "look up why the build fails".

Advice questions are undone only by a concrete object or such a verb: "give me tips for organising files
on my computer" is still advice. A yes/no question is also undone by a request phrase ("can you", "能帮我…吗").
A writing request is undone by a concrete object or a pointing deictic ("summarise ~/notes.txt").

A clause with no cue and no action phrase of its own takes the form of the clause before it ("what's the
difference between zip | and tar.gz?").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from weclaw_desktop.intent import cues
from weclaw_desktop.intent.matcher import Match
from weclaw_desktop.intent.text import Prepared, stem

DAMP = 0.3
POINT_GAP = 3  # units allowed between a deictic word and the object it points at

REQUEST = "request"
KNOWLEDGE = "knowledge"
ADVICE = "advice"
YES_NO = "yes/no"
COMPOSE = "compose"
EDITING = "editing"  # reworking what the assistant wrote ("add a line thanking them")
NEGATED = "negated"
SOCIAL = "social"


@dataclass(frozen=True, slots=True)
class Weights:
    action: float
    topic: float
    similarity: float
    total: float


WEIGHTS: dict[str, Weights] = {
    REQUEST: Weights(1.0, 1.0, 1.0, 1.0),
    KNOWLEDGE: Weights(1.0, 1.0, 1.0, DAMP),
    ADVICE: Weights(1.0, 1.0, 1.0, DAMP),
    YES_NO: Weights(1.0, DAMP, DAMP, 1.0),
    COMPOSE: Weights(1.0, 0.0, 0.0, 1.0),
    EDITING: Weights(0.0, 0.0, 0.0, 0.0),
    NEGATED: Weights(0.0, 0.0, 0.0, 0.0),
    SOCIAL: Weights(0.0, 0.0, 0.0, 0.0),
}


@dataclass(slots=True)
class Form:
    kind: str
    start: int
    end: int
    pointing: bool = False  # about the user's own things
    why: str = ""
    subject_from: int = -1  # a writing request: units from here on are its subject ("a poem about screenshots")

    @property
    def weights(self) -> Weights:
        return WEIGHTS[self.kind]


@dataclass(slots=True)
class Analysis:
    """The forms of a request's clauses, and what a conversation needs to know about it."""

    forms: list[Form]
    social: bool = False  # every clause is thanks, a greeting or an acknowledgement
    cont: bool = False  # "again", "the same", "也": repeats the previous need

    def form_at(self, pos: int) -> Form:
        for f in self.forms:
            if f.start <= pos < f.end:
                return f
        return self.forms[-1] if self.forms else Form(REQUEST, 0, 0)

    @property
    def question(self) -> bool:
        """Every clause with content is a question the model answers itself (for ``weclaw intent``)."""
        kinds = {f.kind for f in self.forms if f.kind not in (SOCIAL,)}
        return bool(kinds) and kinds <= {KNOWLEDGE, ADVICE}


_SOCIAL_EN = frozenset(stem(w) for w in cues.SOCIAL_EN) | cues.SOCIAL_EN
_LEAD = frozenset(stem(w) for w in cues.NEGATION_LEAD) | cues.NEGATION_LEAD
_NOT_YESNO_ZH = frozenset("什怎这那多")
_CONCRETE = frozenset({"‹path›", "‹url›", "‹email›"})
_WHAT_ZH = frozenset({"是什么", "是啥"})
_WHAT = frozenset({"what is a", "what is an", "what's a", "what's an"})


def analyse(
    prepared: Prepared,
    cue_matches: Sequence[Match],
    actions: Sequence[Match],
    *,
    editing: bool = False,
    phrases: Sequence[Match] = (),
) -> Analysis:
    """Forms of the clauses of ``prepared``. ``cue_matches``: the cue matches of the one matcher pass (their
    ``keyword.intent`` is the cue kind); ``actions``: the action-phrase matches of the intents; ``editing``:
    the previous answer was text the assistant wrote (code, a draft), so a clause that opens with an edit
    ("add a line…", "make it handle…", "改成…") asks to rework it; ``phrases``: every intent match (a
    possessive that opens one, "我的车", "my wife", points at the user's own things)."""
    units = prepared.units
    spans = prepared.clauses or [(0, len(units))]
    n = len(spans)
    by_clause: list[dict[str, list[Match]]] = [{} for _ in range(n)]
    starts = [s for s, _ in spans]
    for m in cue_matches:
        found = by_clause[_clause_of(starts, m.start) if n > 1 else 0]
        ms = found.get(m.keyword.intent)
        if ms is None:
            found[m.keyword.intent] = [m]
        else:
            ms.append(m)
    forms: list[Form] = []
    out = Analysis(forms=forms)
    social = True
    for i, (start, end) in enumerate(spans):
        found = by_clause[i]
        form = _form(units[start:end], start, end, found, actions, prepared, phrases)
        if form is None:  # no cue and no action phrase of its own: the form of the clause before
            prev = forms[-1] if forms and forms[-1].kind != SOCIAL else None  # "oh, and …": thanks end there
            form = Form(prev.kind if prev else REQUEST, start, end, prev.pointing if prev else False, "inherited")
        if editing and form.kind == REQUEST and _edits(found, start, units[start:end]):
            form = Form(EDITING, start, end, why="editing what the assistant wrote")
        forms.append(form)
        social = social and form.kind == SOCIAL
        if cues.CONTINUE in found:
            out.cont = True
    out.social = social and bool(forms)
    if n > 1:
        _across_clauses(forms)
    return out


def all_social(prepared: Prepared) -> bool:
    """Every clause is only thanks, a greeting or an acknowledgement (without the cue analysis)."""
    units = prepared.units
    spans = prepared.clauses or [(0, len(units))]
    return bool(units) and all(
        all(u in _SOCIAL_EN or u in cues.SOCIAL_ZH or u == "#" for u in units[a:b]) for a, b in spans
    )


def _across_clauses(forms: list[Form]) -> None:
    for k in range(1, len(forms)):
        f, prev = forms[k], forms[k - 1]
        if f.kind == REQUEST and f.why == "asked" and prev.kind == KNOWLEDGE and prev.why == "how-to question":
            # "怎么把文件弄到手机上，帮我传一下": a bare request after a how-to asks for it to be done
            forms[k - 1] = Form(REQUEST, prev.start, prev.end, prev.pointing, "how-to followed by a request")
        elif f.kind == KNOWLEDGE and f.end - f.start <= 3 and prev.kind in (YES_NO, REQUEST) and not prev.pointing:
            # a bare trailing question ("…, and why?", "为什么呢") makes the clause it follows that question
            forms[k - 1] = Form(KNOWLEDGE, prev.start, prev.end, why="question continued by the next clause")


def _clause_of(starts: list[int], pos: int) -> int:
    i = 0
    for j, s in enumerate(starts):
        if s <= pos:
            i = j
        else:
            break
    return i


def _form(
    clause: list[str],
    start: int,
    end: int,
    found: dict[str, list[Match]],
    actions: Sequence[Match],
    prepared: Prepared,
    phrases: Sequence[Match] = (),
) -> Form | None:
    social = _SOCIAL_EN, cues.SOCIAL_ZH
    if (
        clause
        and (clause[0] in social[0] or clause[0] in social[1])
        and all(u in social[0] or u in social[1] or u == "#" for u in clause)
    ):
        return Form(SOCIAL, start, end, why="thanks or greeting")
    if _definition(clause):  # "what is docker", "what are cookies"
        found = {**found, cues.KNOWLEDGE: found.get(cues.KNOWLEDGE, [])}
    own_actions = [m for m in actions if start <= m.start < end]
    if not found:  # the common case: no cue at all
        if _yes_no(clause):
            return Form(YES_NO, start, end, why="yes/no question")
        return Form(REQUEST, start, end) if own_actions else None
    if own_actions:
        # a cue inside an action phrase belongs to the phrase: "don't forget" is a reminder, "不用记" a
        # memory, "what does ‹code› say" a command to run
        kept: dict[str, list[Match]] = {}
        for kind, ms in found.items():
            if kind in cues.BLOCKING:
                ms = [m for m in ms if not any(_overlaps(m, a) for a in own_actions)]
            if ms:
                kept[kind] = ms
        found = kept
    if cues.COMPOSE in found:  # "we brainstormed it once" tells, it does not ask
        told = [m for m in found[cues.COMPOSE] if m.start == start or clause[m.start - start - 1] not in cues.SUBJECTS]
        found = {**found, cues.COMPOSE: told} if told else {k: v for k, v in found.items() if k != cues.COMPOSE}

    for m in found.get(cues.NEGATION, ()):
        if all(u in _LEAD for u in clause[: m.start - start]):
            return Form(NEGATED, start, end, why="negation")
    if cues.DEFERRAL in found:
        return Form(NEGATED, start, end, why="deferral")
    concrete = not _CONCRETE.isdisjoint(clause)
    pointing = (
        concrete
        or "‹ref›" in clause
        or cues.PAST in found
        or _points(found, cues.POSSESSIVE)
        or _points(found, cues.DEMONSTRATIVE)
        or _in_container(found)
        # an intent's own phrase that opens with a possessive names the user's own: "我的车", "my wife"
        or any(p.start == d.start for d in found.get(cues.POSSESSIVE, ()) for p in phrases)
    )
    current = cues.CURRENT in found
    verb_at = min((m.start for m in found.get(cues.REQUEST_VERB, [])), default=None)
    asked_last = (
        cues.KNOWLEDGE in found
        and cues.COMPOSE in found
        and (max(m.start for m in found[cues.KNOWLEDGE]) > min(m.start for m in found[cues.COMPOSE]))
    )  # "用 Python 写个爬虫的思路是什么": the writing is what the question is about
    if not asked_last and (cues.COMPOSE in found or (prepared.rework and "‹quote›" in clause)):
        # "summarise ~/notes.txt", "write up what's in this folder"; but "a poem about my old file" is a poem
        shown = concrete or "‹ref›" in clause or _points(found, cues.DEMONSTRATIVE) or _in_container(found)
        if shown:
            return Form(REQUEST, start, end, True, "writing about the user's things")
        about = min((m.end for m in found.get(cues.ABOUT, ())), default=-1)
        return Form(COMPOSE, start, end, why="writing request", subject_from=about)
    if cues.EVALUATE in found and cues.ADVICE not in found:
        if pointing:
            return Form(REQUEST, start, end, True, "is the user's thing enough")
        return Form(ADVICE, start, end, why="is it enough, in general")
    if cues.ADVICE in found:
        first = min(m.start for m in found[cues.ADVICE])
        if concrete or cues.PAST in found or (verb_at is not None and verb_at < first):
            return Form(REQUEST, start, end, pointing, "advice about the user's things")
        return Form(ADVICE, start, end, why="advice or opinion")
    if cues.KNOWLEDGE in found:
        first = min((m.start for m in found[cues.KNOWLEDGE]), default=start)
        # "what's a 15% tip on $84": the figures make "what's a" a sum to work out
        sums = "‹math›" in clause and all(m.keyword.phrase in _WHAT for m in found[cues.KNOWLEDGE])
        sums = sums or ("‹math›" in clause and not found[cues.KNOWLEDGE])
        # "显卡是什么型号", "系统是啥版本": an attribute of a thing on this computer, not a definition of it
        attribute = (
            cues.OBJECT in found
            and cues.ATTRIBUTE in found
            and any(m.keyword.phrase in _WHAT_ZH and 0 < end - m.end <= 3 for m in found[cues.KNOWLEDGE])
        )
        if (
            pointing
            or current
            or sums
            or attribute
            or cues.NEUTRAL in found
            or (verb_at is not None and verb_at < first)
        ):
            return Form(REQUEST, start, end, pointing, "question about the user's things or the present")
        return Form(KNOWLEDGE, start, end, why="knowledge question")
    if cues.HOWTO in found:
        # instructions: "how do I clean my laptop" stays the model's; "how big is this folder", a path,
        # the present or a complaint ("怎么这么慢") make it a request
        first = min(m.start for m in found[cues.HOWTO])
        shown = concrete or "‹ref›" in clause or cues.PAST in found or _points(found, cues.DEMONSTRATIVE)
        if shown or current or cues.NEUTRAL in found or (verb_at is not None and verb_at < first):
            return Form(REQUEST, start, end, pointing, "how-to about a thing shown, or the present")
        return Form(KNOWLEDGE, start, end, why="how-to question")
    if _yes_no(clause):
        # a yes/no question about a thing on this computer asks about the user's own ("D盘快满了吗")
        if pointing or current or cues.REQUEST in found or cues.MACHINE in found:
            return Form(REQUEST, start, end, pointing, "yes/no question about the user's things")
        return Form(YES_NO, start, end, why="yes/no question")
    if cues.REQUEST in found and not own_actions:
        return Form(REQUEST, start, end, pointing, "asked")
    if cues.REQUEST in found or own_actions or verb_at is not None or pointing:
        return Form(REQUEST, start, end, pointing)
    return None


def _overlaps(a: Match, b: Match) -> bool:
    """Some unit matched by both (the words in a gap belong to neither: "i'll send it myself")."""
    return any(s1 < e2 and s2 < e1 for s1, e1 in a.spans for s2, e2 in b.spans)


def _points(found: dict[str, list[Match]], deictic: str) -> bool:
    """A deictic word of kind ``deictic`` within a few units before an object."""
    objects = found.get(cues.OBJECT, [])
    if not objects:
        return False
    elsewhere = found.get(cues.ELSEWHERE, ())
    for d in found.get(deictic, []):
        for o in objects:
            if d.start <= o.start <= d.end + POINT_GAP:
                # "my phone battery": the battery of another device, not of this computer
                if not any(d.end <= x.start < o.start for x in elsewhere):
                    return True
            elif o.end <= d.start <= o.end + 1:  # 剪贴板那串
                return True
    return False


def _in_container(found: dict[str, list[Match]]) -> bool:
    """A locative into a container: its contents ("剪贴板里", "桌面上", "on the screen", "in my downloads")."""
    for loc in found.get(cues.LOCATIVE, []):
        for o in found.get(cues.CONTAINER, []):
            if o.end == loc.start and not loc.keyword.phrase.isascii():
                return True
            if loc.end == o.start and loc.keyword.phrase.isascii():
                return True
    return False


_DEFINED = frozenset({"the", "my", "your", "this", "that", "it", "on", "in", "‹ref›"})


def _edits(found: dict[str, list[Match]], start: int, clause: list[str]) -> bool:
    """The clause opens with an edit verb and names nothing else to act on."""
    return (
        any(m.start <= start + 1 for m in found.get(cues.EDIT, ()))
        and _CONCRETE.isdisjoint(clause)
        and cues.REQUEST_VERB not in found
    )


def _definition(clause: list[str]) -> bool:
    """ "what is docker", "what's kubernetes", "what are cookies": a bare noun asked to be defined (but not
    "what's the weather", "what is my ip", "what is on my screen")."""
    if len(clause) < 3 or clause[0] != "what" or clause[1] not in ("is", "s", "are", "ar"):
        return False
    rest = clause[2:]
    return len(rest) <= 2 and rest[0] not in _DEFINED and not rest[0].startswith("‹")


def _yes_no(clause: list[str]) -> bool:
    """An English clause opened by an auxiliary, or a Chinese one closed by 吗 / 呢 / 么 / 嘛."""
    if not clause:
        return False
    first = next((u for u in clause if u not in _LEAD), "")
    if first in cues.YES_NO_EN:
        return True
    last = clause[-1]
    if last in cues.YES_NO_ZH_END:
        return not (last == "么" and len(clause) > 1 and clause[-2] in _NOT_YESNO_ZH)
    return False
