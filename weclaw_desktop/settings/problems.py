"""What the settings store found wrong in settings.json, as data: the log, ``weclaw doctor`` and the
window's notice all show the same records."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class ProblemKind(StrEnum):
    INVALID = "invalid"  # one field's value cannot be used; its fallback is used instead
    UNREADABLE = "unreadable"  # the whole file (not JSON, not an object, cannot be read)
    MCP_ENTRY = "mcp-entry"  # one mcp_servers entry cannot be used: kept as written, not started
    UNKNOWN = "unknown"  # a key this version does not know (a newer version's, or a typo): kept, not used
    NEWER = "newer"  # written by a newer WeClaw: what it added is kept


#: Fail-closed effects: which restriction fell back to a stricter value, and what that means.
EFFECTS: dict[str, str] = {
    "tools-locked": "tools with medium- or high-risk actions are switched off until you switch them on again",
    "approvals-strict": "medium- and high-risk calls ask first, and scheduled tasks may not run them",
    "remembered-cleared": "calls you chose to always allow ask again",
    "roots-outputs": "file tools can reach only the outputs folder",
}


@dataclass(frozen=True)
class SettingsProblem:
    """One problem: where (dotted path, ``mcp_servers[2]`` for an entry, '' for the whole file), what was
    wrong, what is used instead, which restriction (if any) became stricter, and whether the user's
    original value stays in the file until they change that field (``kept``)."""

    path: str
    kind: ProblemKind
    message: str
    used: str
    effects: tuple[str, ...] = ()  # keys of EFFECTS: the restrictions that became stricter
    kept: bool = False

    @property
    def is_error(self) -> bool:
        """False for notes that need no action (unknown keys, a newer version's file)."""
        return self.kind not in (ProblemKind.UNKNOWN, ProblemKind.NEWER)

    def line(self) -> str:
        """One line for the log and ``weclaw doctor``."""
        where = self.path or "the whole file"
        text = f"{where}: {self.message}; {self.used}"
        if self.effects:
            text += " (fails closed: " + "; ".join(EFFECTS[e] for e in self.effects) + ")"
        if self.kept:
            text += "; your value stays in the file until you change it"
        return text

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind.value,
            "message": self.message,
            "used": self.used,
            "effects": list(self.effects),
            "kept": self.kept,
        }


def shown(value: Any, limit: int = 60) -> str:
    """A value as the user wrote it, short enough for one line."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
