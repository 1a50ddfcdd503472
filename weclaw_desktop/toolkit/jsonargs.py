"""Parse the JSON arguments of a tool call within limits, so hostile input is a bad-arguments result.

The model's arguments are text it made up. Nested 100,000 levels deep, ``json.loads`` raises
``RecursionError`` (not a ``JSONDecodeError``) and any code that walks the value recursively (validation,
the loop guard, the UI's argument view) can fail the same way; megabytes of arguments cost memory and
time everywhere they are copied. :func:`parse_arguments` returns the object, or a short reason that the
dispatcher turns into an "invalid arguments" result, like any bad JSON, so sibling calls still run.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64  # nesting of objects and arrays; tool schemas need a handful
MAX_CHARS = 4_000_000  # a file the model writes in one call can be large, but not this large


class ArgumentsError(ValueError):
    """The arguments are not one acceptable JSON object; ``str()`` is the reason."""


def parse_arguments(raw: str | None, *, max_depth: int = MAX_DEPTH, max_chars: int = MAX_CHARS) -> dict[str, Any]:
    """The arguments as a dict; :class:`ArgumentsError` with a short reason otherwise.

    Empty text is ``{}``; a JSON string holding the object (some models double-encode) is decoded once more.
    """
    text = (raw or "").strip()
    if not text:
        return {}
    if len(text) > max_chars:
        raise ArgumentsError(f"the arguments are {len(text):,} characters long; the limit is {max_chars:,}")
    value = _loads(text)
    if isinstance(value, str):
        if len(value) > max_chars:
            raise ArgumentsError(f"the arguments are {len(value):,} characters long; the limit is {max_chars:,}")
        value = _loads(value)
    if not isinstance(value, dict):
        raise ArgumentsError(f"expected a JSON object, got {type(value).__name__}")
    depth = nesting(value, max_depth)
    if depth > max_depth:
        raise ArgumentsError(f"the arguments are nested more than {max_depth} levels deep")
    return value


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ArgumentsError(f"{exc.msg} at character {exc.pos}") from None
    except RecursionError:
        raise ArgumentsError(f"the arguments are nested more than {MAX_DEPTH} levels deep") from None


def nesting(value: Any, stop_after: int = MAX_DEPTH) -> int:
    """Depth of nested dicts and lists in ``value`` (iterative; stops counting past ``stop_after``)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            if deepest > stop_after:
                return deepest
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return deepest
