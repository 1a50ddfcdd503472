"""Limits that keep one turn from running away: result caps, the loop guard and the circuit breaker."""

from __future__ import annotations

import json
from collections import Counter

from weclaw_desktop.toolkit.base import ToolResult, ToolStatus


def cap_text(text: str, limit: int) -> tuple[str, bool]:
    """``text`` cut to about ``limit`` characters, keeping the head and the tail, marked as truncated."""
    if len(text) <= limit:
        return text, False
    omitted = len(text) - limit
    marker = f"\n\n[… truncated: {omitted:,} of {len(text):,} characters omitted …]\n\n"
    keep = max(0, limit - len(marker))
    head = keep * 2 // 3
    tail = keep - head
    return text[:head] + marker + (text[-tail:] if tail else ""), True


class ResultBudget:
    """Per-call cap plus a total for the whole turn; when the total is spent, results shrink to a note."""

    def __init__(self, per_result: int, per_turn: int) -> None:
        self.per_result = per_result
        self.remaining = per_turn

    def take(self, text: str) -> tuple[str, bool]:
        limit = min(self.per_result, max(self.remaining, 0))
        if limit < 400:
            note = (
                f"[result omitted: this turn already returned too much tool output ({len(text):,} characters "
                "here). Summarise what you have, or ask the user to narrow the request.]"
            )
            return note, True
        capped, truncated = cap_text(text, limit)
        self.remaining -= len(capped)
        return capped, truncated


def call_key(function: str, arguments: str) -> tuple[str, str]:
    """Identity of a call for the loop guard: the function and its arguments in canonical form."""
    try:
        canonical = json.dumps(json.loads(arguments or "{}"), sort_keys=True, ensure_ascii=False)
    except ValueError:
        canonical = " ".join((arguments or "").split())
    return function, canonical


class LoopGuard:
    """Counts identical calls in a turn; the ``repeats``-th identical call trips it."""

    def __init__(self, repeats: int = 3) -> None:
        self.repeats = repeats
        self._seen: Counter[tuple[str, str]] = Counter()

    def trips(self, function: str, arguments: str) -> bool:
        key = call_key(function, arguments)
        self._seen[key] += 1
        return self._seen[key] >= self.repeats


class CircuitBreaker:
    """A tool that fails ``threshold`` times in a row is switched off for the rest of the turn."""

    FAILURES = frozenset({ToolStatus.ERROR, ToolStatus.TIMEOUT})

    def __init__(self, threshold: int = 3) -> None:
        self.threshold = threshold
        self._streak: Counter[str] = Counter()
        self.open: set[str] = set()

    def record(self, tool: str, result: ToolResult) -> bool:
        """Note a result; True when this result opened the circuit."""
        if not tool:
            return False
        if result.status in self.FAILURES:
            self._streak[tool] += 1
            if self._streak[tool] >= self.threshold and tool not in self.open:
                self.open.add(tool)
                return True
        elif result.status is ToolStatus.SUCCESS:
            self._streak[tool] = 0
        return False

    def message(self, function: str, tool: str) -> str:
        return (
            f"{function} was not run: {tool} failed {self.threshold} times in a row and is switched off for the "
            "rest of this turn. Use another approach or tell the user what went wrong."
        )
