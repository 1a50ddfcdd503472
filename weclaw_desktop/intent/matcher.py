"""Keyword matching over units: every keyword of every intent in one pass over the request.

Keywords sit in a trie of units, so a request is scanned once, position by position, and only the
keywords that start with the units at hand are compared. A keyword may hold gaps (``发*手机``: "发",
then "手机" within a few units), which covers the words people put in between ("发到我的手机").

When one match lies inside a longer one, only the longer one counts ("我复制了" beats "复制"): the most
specific phrase wins, whichever intent it belongs to.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from itertools import pairwise

from weclaw_desktop.intent.text import keyword_units

MAX_GAP = 6  # units allowed between the segments of a gapped keyword


@dataclass(frozen=True)
class Keyword:
    intent: str
    phrase: str
    segments: tuple[tuple[str, ...], ...]
    weight: float
    layer: int = 0  # matches suppress each other only within a layer (intents vs. language cues)

    @property
    def length(self) -> int:
        return sum(len(s) for s in self.segments)


class Match:
    """One keyword found in a request."""

    __slots__ = ("keyword", "size", "spans")

    def __init__(self, keyword: Keyword, spans: tuple[tuple[int, int], ...], size: int = -1) -> None:
        self.keyword = keyword
        self.spans = spans  # (start, end exclusive) of each matched segment; gaps are not covered
        self.size = size if size >= 0 else sum(e - s for s, e in spans)  # units matched

    @property
    def start(self) -> int:
        return self.spans[0][0]

    @property
    def end(self) -> int:
        return self.spans[-1][1]

    def inside(self, other: Match) -> bool:
        """Every unit of this match is matched by ``other``, a longer match of the same layer. Words in
        the gap of a gapped keyword stay free ("make a zip of my folder": 'zip' is not inside 'make*folder')."""
        if other.keyword.layer != self.keyword.layer or self.size >= other.size:
            return False
        theirs = other.spans
        if len(theirs) == 1:
            os, oe = theirs[0]
            return all(os <= s and e <= oe for s, e in self.spans)
        return all(any(os <= s and e <= oe for os, oe in theirs) for s, e in self.spans)

    def __repr__(self) -> str:
        return f"Match({self.keyword.phrase!r}, {self.spans})"


_Node = dict[str, "tuple[_Node, list[Keyword]]"]


class KeywordMatcher:
    """Plain keywords live in a trie of units, walked from every position of the request (a walk stops at
    the first unit no keyword continues with); keywords with gaps are compared segment by segment."""

    def __init__(self, suppress_layers: frozenset[int] = frozenset({0})) -> None:
        self.suppress_layers = suppress_layers  # layers where a match inside a longer one is dropped
        self._trie: _Node = {}
        self._gapped: dict[str, list[Keyword]] = defaultdict(list)
        self.size = 0

    def add(self, intent: str, phrase: str, weight: float, layer: int = 0) -> None:
        segments = tuple(tuple(s) for s in keyword_units(phrase) if s)
        if not segments:
            return
        kw = Keyword(intent, phrase, segments, weight, layer)
        if len(segments) == 1:
            node = self._trie
            outs: list[Keyword] = []
            for u in segments[0]:
                child = node.get(u)
                if child is None:
                    child = node[u] = ({}, [])
                node, outs = child
            outs.append(kw)
        else:
            self._gapped[segments[0][0]].append(kw)
        self.size += 1

    def vocabulary(self) -> set[str]:
        """Every unit any keyword holds."""
        out: set[str] = set()
        stack = [self._trie]
        while stack:
            node = stack.pop()
            for unit, (child, _) in node.items():
                out.add(unit)
                stack.append(child)
        for kws in self._gapped.values():
            for kw in kws:
                for seg in kw.segments:
                    out.update(seg)
        return out

    def pairs(self) -> set[tuple[str, str]]:
        """Every two units that follow each other inside a keyword ("do it later": (do, it), (it, later))."""
        out: set[tuple[str, str]] = set()
        stack: list[tuple[str, _Node]] = [("", self._trie)]
        while stack:
            prev, node = stack.pop()
            for unit, (child, _) in node.items():
                if prev:
                    out.add((prev, unit))
                stack.append((unit, child))
        for kws in self._gapped.values():
            for kw in kws:
                for seg in kw.segments:
                    out.update(pairwise(seg))
        return out

    def finish(self) -> None:
        """Kept for callers that build in two steps; the trie needs no finishing."""

    def find(self, units: list[str]) -> list[Match]:
        """Maximal matches: in the ``suppress_layers``, a match inside a longer match of the same layer is
        dropped; other layers keep every match."""
        found: list[Match] = []
        tu = tuple(units)
        n = len(tu)
        root, gapped = self._trie, self._gapped
        for i in [i for i, u in enumerate(tu) if u in root or u in gapped]:
            u = tu[i]
            step = root.get(u)
            j = i + 1
            while step is not None:
                node, outs = step
                for kw in outs:
                    found.append(Match(kw, ((i, j),), j - i))
                if j >= n:
                    break
                step = node.get(tu[j])
                j += 1
            kws = gapped.get(u)
            if kws:
                for kw in kws:
                    spans = _match_at(kw.segments, tu, i, n)
                    if spans:
                        found.append(Match(kw, spans))
        if len(found) < 2:
            return found
        suppress = self.suppress_layers
        kept = [m for m in found if m.keyword.layer not in suppress]
        found = [m for m in found if m.keyword.layer in suppress]
        # longest first, and a match is compared only with the kept matches of its own layer
        found.sort(key=lambda m: -m.size)
        distinct: dict[int, list[Match]] = {}  # layer -> kept matches with distinct spans
        verdicts: dict[tuple[int, tuple[tuple[int, int], ...]], bool] = {}  # same spans, same verdict
        for m in found:
            layer = m.keyword.layer
            key = (layer, m.spans)
            keep = verdicts.get(key)
            if keep is None:
                same = distinct.get(layer)
                if same is None:
                    same = distinct[layer] = []
                    keep = True
                else:
                    keep = not any(m.inside(k) for k in same)
                verdicts[key] = keep
                if keep:
                    same.append(m)
            if keep:
                kept.append(m)
        return kept


def _match_at(
    segments: tuple[tuple[str, ...], ...], units: tuple[str, ...], i: int, n: int
) -> tuple[tuple[int, int], ...]:
    """The spans of ``segments`` matched from ``i`` (each within MAX_GAP of the previous), or ()."""
    first = segments[0]
    k = len(first)
    # the first unit is the one the keyword was found under; only a longer first segment needs a check
    if k > 1 and (i + k > n or units[i : i + k] != first):
        return ()
    spans = [(i, i + k)]
    pos = i + k
    for seg in segments[1:]:
        k = len(seg)
        head = seg[0]
        limit = min(n - k, pos + MAX_GAP)
        j = pos
        while j <= limit:
            if units[j] == head and (k == 1 or units[j : j + k] == seg):
                break
            j += 1
        else:
            return ()
        pos = j + k
        spans.append((j, pos))
    return tuple(spans)
