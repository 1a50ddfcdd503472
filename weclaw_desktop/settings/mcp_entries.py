"""``mcp_servers``: every entry is checked on its own, so one bad server never costs the others.

A bad entry (not an object, a schema error such as ``"transport": "sse"`` or a name over 32 characters,
a stdio server without a command, a second server of the same name) becomes an :class:`InvalidMcpServer`:
kept exactly as written, never started, shown with its error. To add a transport, extend
``McpServerSettings.transport`` and :func:`entry_problem`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from weclaw_desktop.settings.schema import InvalidMcpServer, McpServerSettings
from weclaw_desktop.toolkit.manifest import format_validation_error


def entry_problem(settings: McpServerSettings) -> str | None:
    """Why a schema-valid entry still cannot work (said before anything starts), or None."""
    if settings.transport == "stdio" and not settings.command.strip():
        return "no command is set; enter the program that starts the server (e.g. npx or uvx)"
    if settings.transport in ("http", "sse") and not settings.url.startswith(("http://", "https://")):
        return "the URL must start with http:// or https://"
    return None


@dataclass
class ParsedServers:
    valid: list[McpServerSettings] = field(default_factory=list)
    invalid: list[InvalidMcpServer] = field(default_factory=list)
    unknown: list[tuple[int, str]] = field(default_factory=list)  # (index, key) of keys this version ignores


def parse_servers(raw: list[Any]) -> ParsedServers:
    out = ParsedServers()
    seen: set[str] = set()
    known = set(McpServerSettings.model_fields)
    for index, entry in enumerate(raw):
        errors: list[str] = []
        if not isinstance(entry, dict):
            errors.append("an entry must be an object with a name and a command or URL")
        else:
            try:
                server = McpServerSettings.model_validate(entry)
            except ValidationError as exc:
                errors += format_validation_error(exc)
            else:
                problem = entry_problem(server)
                if problem is not None:
                    errors.append(problem)
                elif server.name in seen:
                    errors.append(f"another server above is also called '{server.name}'")
                else:
                    seen.add(server.name)
                    out.valid.append(server)
                    out.unknown += [(index, key) for key in entry if key not in known]
        if errors:
            out.invalid.append(InvalidMcpServer(raw=entry, errors=errors, index=index))
    return out


def draft(raw: object) -> McpServerSettings:
    """An unusable entry as a form can show it: every field that can be read, the rest default (not valid:
    built with ``model_construct``; the MCP page validates it once the user edits it)."""
    values: dict[str, object] = {}
    if isinstance(raw, dict):
        for name in McpServerSettings.model_fields:
            if name not in raw:
                continue
            try:
                checked = McpServerSettings.__pydantic_validator__.validate_assignment(
                    McpServerSettings.model_construct(name=""), name, raw[name]
                )
            except ValidationError:
                if name == "name" and isinstance(raw[name], str):
                    values[name] = raw[name]  # a name that is too long is shown as written
                continue
            values[name] = getattr(checked, name)
    defaults = {n: f.get_default(call_default_factory=True) for n, f in McpServerSettings.model_fields.items()}
    defaults["name"] = ""
    if "transport" not in values and isinstance(raw, dict) and raw.get("url"):
        values["transport"] = "http"  # e.g. legacy "sse": show it with its URL, the nearest we have
    return McpServerSettings.model_construct(**{**defaults, **values})
