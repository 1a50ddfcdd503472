"""The paraphrase signal: BM25 over character n-grams and English stems.

Keywords catch the phrasings someone wrote down; people say the same thing in other words ("整到手机上",
"what's eating my laptop"). Each document (an intent, or a tool for ``tool_search``) is the bag of terms
of its keywords, examples and descriptions: Chinese character bigrams and English stems, without
function characters and words. (Single characters as extra terms were measured: they bought nothing on
three labelled sets and cost a third of the time, so they are not used.) A request is scored
against every document through an inverted index, so the cost grows with the request, not the catalogue.

There is no length normalisation by default (``b = 0``): a big intent, with many keywords, must not be
pushed down for its size. The score is mapped to 0..1 by ``s / (s + k)``.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable

from weclaw_desktop.intent.text import stem

# Function characters and words: they say nothing about the need.
STOP_CJK = frozenset(
    "的了我你他她它们把一个是在吗呢吧啊呀哦嗯给这那帮下都就也要和有不请能可以到上里中么什怎还很会"
    "好说让去来得地着过被从对为与及或等些儿哪谁几多少吧嘛啦呗咋该想"
)
_STOP_EN_WORDS = (
    "a an the to of for in on at by with and or is are was were be been being it its this that these those my "
    "me i you your we our us can could would should will shall may might must do does did what how which who "
    "there here some any all just now then so as from up out about into them they he she his her have has had "
    "not no yes get got make let please want need like thank thanks hi hello ok okay also too very really"
)
STOP_EN = frozenset(stem(w) for w in _STOP_EN_WORDS.split())


def terms(units: list[str]) -> dict[str, float]:
    """Terms of a unit sequence with their counts: Chinese character bigrams (not both function
    characters) and English stems (not function words). Markers such as ‹path› are left to the keywords."""
    out: dict[str, float] = {}
    get = out.get
    prev = ""
    prev_stop = True
    stop_cjk, stop_en = STOP_CJK, STOP_EN
    for u in units:
        if len(u) == 1 and u >= "\u3400":  # a CJK character
            stop = u in stop_cjk
            if prev and not (prev_stop and stop):
                bigram = prev + u
                out[bigram] = get(bigram, 0.0) + 1.0
            prev, prev_stop = u, stop
            continue
        prev = ""
        if len(u) < 2 or u[0] in "‹#" or u in stop_en:
            continue
        out[u] = get(u, 0.0) + 1.0
    return out


def subword_terms(units: list[str]) -> dict[str, float]:
    """Finer terms for ``tool_search``: those of :func:`terms`, plus single Chinese characters (half
    weight) and, for English words of five letters or more, their first four and five letters (half weight), so a
    typo or another form of a word still meets the tool's text ("remnid" ~ "remind", "compression" ~
    "compress")."""
    out = terms(units)
    get = out.get
    stop_cjk, stop_en = STOP_CJK, STOP_EN
    for u in units:
        if len(u) == 1 and u >= "\u3400":
            if u not in stop_cjk:
                out[u] = get(u, 0.0) + 0.5
        elif len(u) >= 5 and u[0] not in "‹#" and u not in stop_en:
            for key in ("~" + u[:4], "~" + u[:5]) if len(u) >= 6 else ("~" + u[:4],):
                out[key] = get(key, 0.0) + 0.5
    return out


class BM25Index:
    def __init__(
        self,
        k1: float = 1.2,
        b: float = 0.0,
        k: float = 4.0,
        term_fn: Callable[[list[str]], dict[str, float]] | None = None,
    ) -> None:
        self.k1, self.b, self.k = k1, b, k
        self.term_fn = term_fn  # None: :func:`terms`, walked inline in :meth:`scores` (the fast path)
        self._postings: dict[str, list[tuple[str, float]]] = {}
        self._docs: dict[str, Counter[str]] = {}

    def add(self, doc: str, units: Iterable[list[str]]) -> None:
        bag = self._docs.setdefault(doc, Counter())
        fn = self.term_fn or terms
        for u in units:
            bag.update(fn(u))  # Counter.update adds the weights

    def finish(self) -> None:
        n_docs = len(self._docs) or 1
        lengths = {d: sum(bag.values()) for d, bag in self._docs.items()}
        avg = (sum(lengths.values()) / n_docs) or 1.0
        df: Counter[str] = Counter()
        for bag in self._docs.values():
            df.update(bag.keys())
        postings: dict[str, list[tuple[str, float]]] = defaultdict(list)
        for doc, bag in self._docs.items():
            norm = self.k1 * (1 - self.b + self.b * lengths[doc] / avg)
            for term, tf in bag.items():
                idf = math.log(1 + (n_docs - df[term] + 0.5) / (df[term] + 0.5))
                postings[term].append((doc, idf * tf * (self.k1 + 1) / (tf + norm)))
        self._postings = dict(postings)

    def scores(self, units: list[str]) -> dict[str, float]:
        """Document -> similarity in 0..1. Walks the units once (the same terms as :func:`terms`, each
        occurrence counted) and adds postings as it goes."""
        if self.term_fn is not None:
            return self._scores_of(self.term_fn(units))
        raw: dict[str, float] = {}
        get = raw.get
        postings = self._postings
        stop_cjk, stop_en = STOP_CJK, STOP_EN
        prev = ""
        prev_stop = True
        for u in units:
            if len(u) == 1 and u >= "\u3400":  # a CJK character
                stop = u in stop_cjk
                plist = postings.get(prev + u) if prev and not (prev_stop and stop) else None
                prev, prev_stop = u, stop
            else:
                prev = ""
                plist = None if len(u) < 2 or u[0] in "‹#" or u in stop_en else postings.get(u)
            if plist:
                for doc, w in plist:
                    raw[doc] = get(doc, 0.0) + w
        k = self.k
        return {doc: s / (s + k) for doc, s in raw.items()}

    def _scores_of(self, query: dict[str, float]) -> dict[str, float]:
        raw: dict[str, float] = {}
        for term, count in query.items():
            for doc, w in self._postings.get(term, ()):
                raw[doc] = raw.get(doc, 0.0) + w * count
        k = self.k
        return {doc: s / (s + k) for doc, s in raw.items()}
