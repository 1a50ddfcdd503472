"""Limits that keep one turn from running away: result caps, the loop guard and the circuit breaker."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from weclaw_desktop.toolkit.argkinds import Shape, canonical_arguments, path_fields
from weclaw_desktop.toolkit.base import ToolResult, ToolStatus
from weclaw_desktop.toolkit.jsonargs import ArgumentsError, parse_arguments

if TYPE_CHECKING:
    from weclaw_desktop.toolkit.registry import ToolRegistry

#: function name -> its arguments declared as paths (toolkit/argkinds.py); {} for none or unknown
PathFieldsOf = Callable[[str], dict[str, Shape]]


def registry_path_fields(registry: ToolRegistry) -> PathFieldsOf:
    """The path arguments of a function, as its tool declares them on the parameter model."""

    def fields(function: str) -> dict[str, Shape]:
        ref = registry.resolve(function)
        if ref is None:
            return {}
        try:
            return path_fields(registry.action_def(ref.tool, ref.action).params)
        except Exception:  # a tool that cannot load is reported by the dispatcher; compare as text here
            return {}

    return fields


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


def call_key(
    function: str, arguments: str, *, path_fields: dict[str, Shape] | None = None, base: Path | None = None
) -> tuple[str, str]:
    """Identity of a call for the loop guard: the function and its arguments in canonical form.

    Keys are sorted and, for the arguments the tool declares as paths, the path is spelled one way
    (``~/./x``, ``~//x``, ``x`` and the absolute path are the same call). Arguments that do not parse
    (bad JSON, nested too deep) are compared as whitespace-normalised text.
    """
    try:
        value = parse_arguments(arguments)
    except ArgumentsError:
        return function, " ".join((arguments or "").split())
    if path_fields:
        value = canonical_arguments(value, path_fields, base or Path(os.path.expanduser("~")))
    return function, json.dumps(value, sort_keys=True, ensure_ascii=False)


def relative_base(allowed_roots: Sequence[Path]) -> Path:
    """The folder relative paths are resolved against (as the path guard does): home, unless home is
    outside every allowed root, then the first root."""
    home = Path(os.path.realpath(os.path.expanduser("~")))
    roots = [Path(os.path.realpath(os.path.expanduser(str(r)))) for r in allowed_roots]
    if not roots or any(home == r or r in home.parents for r in roots):
        return home
    return roots[0]


class LoopGuard:
    """Counts identical calls in a turn; the ``repeats``-th identical call trips it."""

    def __init__(
        self, repeats: int = 3, *, path_fields_of: PathFieldsOf | None = None, base: Path | None = None
    ) -> None:
        self.repeats = repeats
        self._path_fields_of = path_fields_of
        self._base = base
        self._seen: Counter[tuple[str, str]] = Counter()

    def trips(self, function: str, arguments: str) -> bool:
        fields = self._path_fields_of(function) if self._path_fields_of is not None else None
        key = call_key(function, arguments, path_fields=fields, base=self._base)
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
