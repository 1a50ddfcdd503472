"""Names of MCP tools as the model sees them: ``mcp_<server>_<action>``, safe and at most 64 characters.

A server's tool names may hold any characters (dots, slashes, Chinese). The action name is the name
transliterated to ASCII (``anyascii``: "读取文件" -> "DuQuWenJian", "ü" -> "u"), keeping what is allowed
(``[A-Za-z0-9_-]``) and replacing the rest with ``_``; when the whole function name would pass 64
characters it is cut and given a short hash of the original name so two long names stay distinct.
Names that still come out the same ("get.issue" and "get_issue") all get a hash of their original name,
except one that was already a safe name itself, so every tool keeps a function and the names do not
depend on the order the server lists its tools in.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from dataclasses import dataclass

from anyascii import anyascii

from weclaw_desktop.toolkit.registry import MAX_FUNCTION_NAME

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_HASH_LEN = 8


def tool_name(server: str) -> str:
    """The registry name of a server's tool (one tool per server)."""
    return f"mcp_{server}"


def server_of(tool: str) -> str | None:
    """The server name behind a tool name, or None when it is not an MCP tool."""
    return tool[4:] if tool.startswith("mcp_") and len(tool) > 4 else None


def _digest(original: str) -> str:
    return hashlib.sha1(original.encode("utf-8")).hexdigest()[:_HASH_LEN]


def action_name(server: str, original: str, *, suffix: bool = False) -> str:
    """The action name for the server tool ``original``; ``mcp_<server>_<action>`` fits 64 characters.

    ``suffix`` adds a hash of ``original`` (to tell apart names that sanitise to the same action).
    """
    room = MAX_FUNCTION_NAME - len(tool_name(server)) - 1
    if room < _HASH_LEN + 2:
        raise ValueError(f"server name '{server}' is too long to leave room for tool names; shorten it")
    safe = _UNSAFE.sub("_", anyascii(original)).strip("_") or "tool"
    if suffix or len(safe) > room:  # with a hash of the full name, so names that share a start stay apart
        safe = f"{safe[: room - _HASH_LEN - 1].rstrip('_')}_{_digest(original)}"
    return safe


@dataclass(frozen=True)
class NamedTool:
    original: str  # the server's name, sent back on calls
    action: str  # our action name
    function: str  # mcp_<server>_<action>


def assign_names(server: str, originals: list[str]) -> tuple[list[NamedTool], list[str]]:
    """Action names for a server's tools, in order; names that clash get a hash of the original.

    Returns the named tools and one problem message per tool that could not be named at all.
    """
    problems: list[str] = []
    plain: dict[str, str] = {}
    groups: dict[str, list[str]] = defaultdict(list)
    for original in dict.fromkeys(originals):
        try:
            act = action_name(server, original)
        except ValueError as exc:
            problems.append(str(exc))
            continue
        plain[original] = act
        groups[act].append(original)
    chosen: dict[str, str] = {}
    for act, members in groups.items():
        if len(members) == 1:
            chosen[members[0]] = act
            continue
        exact = [m for m in members if m == act]
        for member in members:
            chosen[member] = act if member in exact[:1] else action_name(server, member, suffix=True)
    prefix = tool_name(server)
    named: list[NamedTool] = []
    taken: dict[str, str] = {}
    for original, act in chosen.items():
        if act in taken:  # two hashes alike: practically never, but never two tools behind one name
            problems.append(
                f"tool '{original}' of MCP server '{server}' is skipped: its name becomes "
                f"'{prefix}_{act}', the same as tool '{taken[act]}'. Ask the server's author to rename one."
            )
            continue
        taken[act] = original
        named.append(NamedTool(original=original, action=act, function=f"{prefix}_{act}"))
    return named, problems
