"""Names of MCP tools as the model sees them: ``mcp_<server>_<action>``, safe and at most 64 characters.

A server's tool names may hold any characters (dots, slashes, Chinese). The action name keeps what is
allowed (``[A-Za-z0-9_-]``), replaces the rest with ``_`` and, when the whole function name would pass
64 characters, is cut and given a short hash of the original name so two long names stay distinct.
Two server tools that still end up with the same action name are a collision: the second is refused
with a message that says which tools clash and what to do.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from weclaw_desktop.toolkit.registry import MAX_FUNCTION_NAME

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_HASH_LEN = 8


def tool_name(server: str) -> str:
    """The registry name of a server's tool (one tool per server)."""
    return f"mcp_{server}"


def server_of(tool: str) -> str | None:
    """The server name behind a tool name, or None when it is not an MCP tool."""
    return tool[4:] if tool.startswith("mcp_") and len(tool) > 4 else None


def action_name(server: str, original: str) -> str:
    """The action name for the server tool ``original``; ``mcp_<server>_<action>`` fits 64 characters."""
    room = MAX_FUNCTION_NAME - len(tool_name(server)) - 1
    if room < _HASH_LEN + 2:
        raise ValueError(f"server name '{server}' is too long to leave room for tool names; shorten it")
    safe = _UNSAFE.sub("_", original).strip("_") or "tool"
    if len(safe) > room:  # cut, with a hash of the full name so long names that share a start stay apart
        digest = hashlib.sha1(original.encode("utf-8")).hexdigest()[:_HASH_LEN]
        safe = f"{safe[: room - _HASH_LEN - 1].rstrip('_')}_{digest}"
    return safe


@dataclass(frozen=True)
class NamedTool:
    original: str  # the server's name, sent back on calls
    action: str  # our action name
    function: str  # mcp_<server>_<action>


def assign_names(server: str, originals: list[str]) -> tuple[list[NamedTool], list[str]]:
    """Action names for a server's tools, in order; the second of two colliding names is refused.

    Returns the named tools and one problem message per refused tool.
    """
    named: list[NamedTool] = []
    problems: list[str] = []
    taken: dict[str, str] = {}
    prefix = tool_name(server)
    for original in originals:
        try:
            act = action_name(server, original)
        except ValueError as exc:
            problems.append(str(exc))
            continue
        if act in taken:
            problems.append(
                f"tool '{original}' of MCP server '{server}' is skipped: its name becomes "
                f"'{prefix}_{act}', the same as tool '{taken[act]}'. Ask the server's author to rename one."
            )
            continue
        taken[act] = original
        named.append(NamedTool(original=original, action=act, function=f"{prefix}_{act}"))
    return named, problems
