"""Tool-call arguments as people read them: one ``name: value`` line per argument, multi-line text
(code, a document) shown as an indented block instead of one JSON string full of ``\\n`` escapes."""

from __future__ import annotations

import json
from typing import Any

INDENT = "    "


def readable_arguments(arguments: dict[str, Any] | str) -> str:
    """``arguments`` as a dict or the JSON text the model sent (shown as is when it is not a JSON object)."""
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            return arguments
        if not isinstance(value, dict):
            return arguments
        arguments = value
    lines: list[str] = []
    for name, value in arguments.items():
        if isinstance(value, str) and "\n" in value.strip("\n"):
            lines.append(f"{name}:")
            lines += [f"{INDENT}{line}" if line else "" for line in value.rstrip("\n").splitlines()]
        elif isinstance(value, str):
            lines.append(f"{name}: {value}")
        else:
            lines.append(f"{name}: {json.dumps(value, ensure_ascii=False)}")
    return "\n".join(lines)
