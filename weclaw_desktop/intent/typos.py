"""Typo tolerance for English words: a word the keyword tables do not know is read as the one word they know
within one edit ("batery" -> "battery", "remnid" -> "remind", "scrensh" is too far).

The vocabulary is every English unit of the intent keywords and the language cues. Each word of five letters
or more is indexed under itself and every form with one letter deleted (a symmetric-deletion index), so a
request word meets a vocabulary word when they differ by one insertion, deletion, substitution or adjacent
swap. A correction needs the same first letter and exactly one candidate; short words, words the tables
already know and everyday words (thanks, please, ...) are never touched, so "mail" stays "mail" and
"thanks" does not become "think".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

MIN_LENGTH = 5
MEMO = 4096  # words looked up before: the answer is kept (cleared when full)


def _deletions(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


class TypoIndex:
    def __init__(self, vocabulary: Iterable[str], known: Iterable[str] = ()) -> None:
        self.known: set[str] = set(known)  # never corrected, never a correction
        index: dict[str, set[str]] = defaultdict(set)
        for word in vocabulary:
            if not word.isascii() or not word.isalpha():
                continue
            self.known.add(word)
            if len(word) >= MIN_LENGTH:
                index[word].add(word)
                for d in _deletions(word):
                    index[d].add(word)
        self._index = dict(index)
        self._memo: dict[str, str | None] = {}

    def correct(self, units: list[str]) -> int:
        """Replace, in place, each unknown English unit that is one edit from a single known word; returns
        how many were replaced."""
        fixed = 0
        known, memo = self.known, self._memo
        for i, u in enumerate(units):
            if len(u) < MIN_LENGTH or u in known or not ("a" <= u[0] <= "z"):
                continue
            if u in memo:
                word = memo[u]
            else:
                if len(memo) >= MEMO:
                    memo.clear()
                word = memo[u] = self._lookup(u)
            if word is not None:
                units[i] = word
                fixed += 1
        return fixed

    def _lookup(self, u: str) -> str | None:
        if not u.isalpha():
            return None
        index = self._index
        found = set(index.get(u, ()))
        for d in _deletions(u):
            found |= index.get(d, set())
        found = {w for w in found if w[0] == u[0] and abs(len(w) - len(u)) <= 1}
        return found.pop() if len(found) == 1 else None
