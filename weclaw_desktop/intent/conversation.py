"""Conversation context for routing: what came before the request, so follow-ups route correctly.

The engine gets a :class:`Conversation` (the earlier turns, oldest first) beside the request. From it:

- **referents**: what the previous turn produced, as a marker unit (code the assistant wrote: ‹pycode› or
  ‹code›; a draft e-mail or text: ‹draft› / ‹text›; a file a tool made or a path it named: ‹ref› ‹path›;
  links: ‹url›). The marker is put after the words that stand for it ("run it" -> "run it ‹pycode›") and
  after a Chinese verb left without its object ("跑一下", "发给 … 吧"), so the intents' own action phrases
  ("run * ‹pycode›", "send * ‹draft›") decide what the follow-up asks for;
- **tool turns**: the earlier turns that called tools, newest first. A follow-up that repeats a need
  ("again", "the same", "那后天呢", "actually make it the 2nd") or routes to nothing of its own gets the
  tools of the turn it refers to: the one that shares most words with it (three or more tool turns back
  too), else the newest.

- **offers**: when the assistant ended by offering to do something ("Want me to zip ~/logs?", "要不要我发到你
  手机上？"), a plain yes ("yes please", "好的") is routed as that offer.

Thanks and other social turns get nothing, not even the previous turn's tools (see :mod:`forms`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from weclaw_desktop.intent import cues
from weclaw_desktop.intent.similarity import terms
from weclaw_desktop.intent.text import EXTENSION_MARKERS, Prepared, normalise, stem, units_of

LOOKBACK = 6  # earlier tool-using turns a follow-up can refer to
_COPULA = frozenset({"s", "is", "was", "wa"})

_FENCE = re.compile(r"```[ \t]*([\w+#-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_INLINE = re.compile(r"`([^`\n]{2,200})`")
_PY = re.compile(r"\s*(?:import |from \w+ import |print\(|def |class |lambda |for \w+ in |\w+ = )")
_SHELL_TAGS = frozenset({"sh", "bash", "shell", "zsh", "console", "powershell", "ps1", "ps", "cmd", "bat", "fish"})
_PY_TAGS = frozenset({"python", "py", "python3", "ipython", "pycon"})
_PATH = re.compile(
    r"(?:~|[a-zA-Z]:)?[\\/][^\s\"'“”‘’「」()（）,，。;；]+\.\w{1,5}\b|\b[\w\-\u4e00-\u9fff]+\.(?:docx?|md|pdf|png|jpe?g|"
    r"zip|csv|xlsx?|txt|pptx?|html?|json|py|sh|mp3|mp4|mov|wav)\b"
)
_URL = re.compile(r"https?://\S+|www\.\S+")
_DRAFT = re.compile(
    r"^\s*(?:subject|主题|标题)\s*[:：]|^\s*(?:dear|hi|hello|hey)\b[^\n]{0,40},\s*$|^\s*[\u4e00-\u9fff]{1,8}(?:您好|你好)[:：，,]"
    r"|^\s*(?:best|regards|best regards|kind regards|cheers|sincerely|thanks|此致|敬礼)\b",
    re.M | re.I,
)


@dataclass(frozen=True)
class Turn:
    """One earlier turn: the user's text, the assistant's answer, the tools it called, the files they made."""

    user: str
    assistant: str = ""
    tools: tuple[str, ...] = ()
    files: tuple[str, ...] = ()


@dataclass
class Conversation:
    """The earlier turns of a session, oldest first (the routing context of the next request)."""

    turns: list[Turn] = field(default_factory=list)
    _referent: list[str] | None = field(default=None, repr=False)

    @classmethod
    def from_labels(cls, history: Iterable[Mapping[str, Any]]) -> Conversation:
        """From the ``history`` field of a labelled request: ``[{"user", "assistant", "tools"}, ...]``."""
        return cls(
            [
                Turn(
                    user=str(h.get("user", "")),
                    assistant=str(h.get("assistant", "")),
                    tools=tuple(h.get("tools", ())),
                    files=tuple(h.get("files", ())),
                )
                for h in history
            ]
        )

    @property
    def last(self) -> Turn | None:
        return self.turns[-1] if self.turns else None

    def recent_tools(self, n: int = 3) -> list[list[str]]:
        """Tools of the last ``n`` tool-using turns, newest first (what the exposer's sticky rule reads)."""
        return [list(t.tools) for t in self.tool_turns()[:n]]

    def tool_turns(self) -> list[Turn]:
        """Earlier turns that called a tool, newest first, at most :data:`LOOKBACK`."""
        return [t for t in reversed(self.turns) if t.tools][:LOOKBACK]

    def referent(self) -> list[str]:
        """Marker units for what the previous turn produced (empty when it produced nothing to act on)."""
        if self._referent is None:
            self._referent = produced(self.last) if self.last is not None else []
        return self._referent

    def offer(self) -> str:
        """The request the assistant offered at the end of its last answer ("Want me to zip ~/logs?" ->
        "zip ~/logs"), or "" when it offered nothing."""
        last = self.last
        if last is None or not last.assistant:
            return ""
        tail = normalise(last.assistant[-300:])
        best = ""
        for phrase in cues.OFFERS:
            i = tail.rfind(phrase)
            if i >= 0 and len(tail) - i > len(best):
                best = tail[i + len(phrase) :]
        return best.strip(" ?？。.!！")

    def referred_turn(self, prepared: Prepared) -> tuple[Turn | None, int]:
        """The earlier tool turn this request refers to, and how many words (bigrams, stems) they share:
        the turn sharing most, else the newest (sharing 0)."""
        turns = self.tool_turns()
        if not turns:
            return None, 0
        mine = terms(prepared.units)
        best, best_n = turns[0], 0
        for t in turns:
            shared = sum(1 for term in terms(units_of(normalise(t.user))) if term in mine)
            if shared > best_n:
                best, best_n = t, shared
        return best, best_n


_CONFIRM = cues.CONFIRM | {stem(w) for w in cues.CONFIRM}
_REFUSE = cues.REFUSE | {stem(w) for w in cues.REFUSE}


def confirms(prepared: Prepared) -> bool:
    """Only words of consent ("yes please", "好的，弄吧", "go ahead"), and no refusal."""
    units = prepared.units
    return bool(units) and all(u in _CONFIRM for u in units) and not any(u in _REFUSE for u in units)


def produced(turn: Turn) -> list[str]:
    """What ``turn`` left to act on, as marker units, most specific first."""
    if turn.files:
        return ["‹ref›", "‹path›", *_kind(turn.files[-1])]
    text = turn.assistant
    m = _FENCE.search(text)
    if m is not None:
        tag, body = m.group(1).lower(), m.group(2)
        if tag in _PY_TAGS or (tag not in _SHELL_TAGS and _PY.match(body)):
            return ["‹pycode›"]
        return ["‹code›"]
    m = _INLINE.search(text)
    if m is not None:
        return ["‹pycode›"] if _PY.match(m.group(1)) else ["‹code›"]
    if len(_DRAFT.findall(text)) >= 1 and len(text) >= 60:
        return ["‹draft›"]
    paths = _PATH.findall(text)
    if paths:
        return ["‹ref›", "‹path›", *_kind(paths[-1])]
    if _URL.search(text):
        return ["‹url›"]
    if len(text) >= 40 and not turn.tools:
        return ["‹text›"]
    return []


def _kind(path: str) -> list[str]:
    ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    marker = EXTENSION_MARKERS.get(ext)
    return [marker] if marker else []


def resolve(prepared: Prepared, referent: Sequence[str], together: Collection[tuple[str, str]] = ()) -> None:
    """Put ``referent`` after each word that stands for an earlier result, and after a Chinese verb left
    without an object at the end of a clause; clause spans are shifted to match (in place). Where the word
    and the next one belong to one phrase (``together``: "do it later", "look it up"), the referent goes to
    the end of the clause instead, so the phrase still matches."""
    if not referent:
        return
    units = prepared.units
    at: list[int] = []  # insert after these positions
    ends = [e for _, e in prepared.clauses] or [len(units)]
    for i, u in enumerate(units):
        nxt = units[i + 1] if i + 1 < len(units) else ""
        # "that's all", "it's fine": a copula, not a pointer; a marker already there needs no second one
        if u in cues.ANAPHORA and not nxt.startswith("‹") and nxt not in _COPULA:
            if (u, nxt) in together:
                end = next(e for e in ends if e > i)
                if end - 1 not in at:
                    at.append(end - 1)
            else:
                at.append(i)
    at.sort()
    if not at:
        for _, end in prepared.clauses or [(0, len(units))]:
            clause = "".join(u for u in units[max(0, end - 6) : end] if len(u) == 1)
            if any(v in clause for v in cues.BARE_VERBS_ZH):
                at.append(end - 1)
    if not at:
        return
    new: list[str] = []
    shift: list[int] = []  # new index of each old position
    for i, u in enumerate(units):
        shift.append(len(new))
        new.append(u)
        if i in at:
            new.extend(referent)
    shift.append(len(new))
    prepared.units = new
    prepared.clauses = [
        (shift[s], shift[e - 1] + 1 + (len(referent) if (e - 1) in at else 0)) for s, e in prepared.clauses
    ]
