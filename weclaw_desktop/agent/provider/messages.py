"""The conversation as the endpoint must receive it: the profile's send-back and echo rules applied.

The loop and the history keep assistant messages in a neutral form: ``role``, ``content``, ``tool_calls`` (each
call with the opaque fields the endpoint attached) and a private ``_meta`` with what else was stored::

    {"reasoning": "...", "reasoning_field": "reasoning_content", "reasoning_ms": 1200,
     "extras": {"reasoning_details": [...]}, "source": "deepseek@api.deepseek.com"}

:func:`outbound` turns that into the request's messages, right before sending:

- reasoning goes back when the profile's ``send_back`` says so: ``tool_turns`` = every assistant message between
  two user messages when any of them made tool calls (DeepSeek, Kimi: required; missing -> HTTP 400), ``always``,
  or ``never``; under the profile's ``send_field`` or else the field it arrived in (reasoning parsed from
  ``<think>`` tags has no field and is not sent); with ``placeholder``, a tool-call turn that has no reasoning
  (another model wrote it) gets an empty field;
- opaque fields (message extras, tool-call extras) go back verbatim, only to the endpoint that sent them and only
  when its profile allows them;
- ``_meta`` never leaves the process.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlparse

from weclaw_desktop.agent.provider.assembly import KNOWN_CALL_FIELDS
from weclaw_desktop.agent.provider.profiles import Profile

META = "_meta"


def source_id(profile: Profile, base_url: str) -> str:
    """Who wrote a message: the profile and the endpoint's host (custom endpoints differ by host)."""
    host = (urlparse(base_url).netloc or base_url).lower()
    return f"{profile.key}@{host}"


def tool_turn_flags(messages: Sequence[dict[str, Any]]) -> list[bool]:
    """For each message: an assistant message in a stretch (between user messages) that made tool calls."""
    flags = [False] * len(messages)
    start = 0
    for i in range(len(messages) + 1):
        if i == len(messages) or messages[i].get("role") == "user":
            stretch = range(start, i)
            if any(messages[j].get("role") == "assistant" and messages[j].get("tool_calls") for j in stretch):
                for j in stretch:
                    flags[j] = messages[j].get("role") == "assistant"
            start = i + 1
    return flags


def outbound(
    messages: Sequence[dict[str, Any]], profile: Profile, *, source: str, echo: bool = True
) -> list[dict[str, Any]]:
    """The request's messages. ``echo=False`` sends no reasoning and no opaque fields (an endpoint refused them)."""
    flags = tool_turn_flags(messages)
    rules = profile.reasoning
    out: list[dict[str, Any]] = []
    for msg, in_tool_turn in zip(messages, flags, strict=True):
        if META not in msg and not (msg.get("role") == "assistant" and msg.get("tool_calls")):
            out.append(msg)
            continue
        wire = {k: v for k, v in msg.items() if k != META}
        meta: dict[str, Any] = msg.get(META) or {}
        same = echo and meta.get("source") == source
        if wire.get("tool_calls"):
            wire["tool_calls"] = [_call(c, profile, same) for c in wire["tool_calls"]]
        if same:
            for key, value in (meta.get("extras") or {}).items():
                if key not in wire and profile.allows_echo(key):
                    wire[key] = value
        if echo and msg.get("role") == "assistant":
            send = rules.send_back == "always" or (rules.send_back == "tool_turns" and in_tool_turn)
            text = meta.get("reasoning") or ""
            name = rules.send_field or meta.get("reasoning_field") or ""
            if send and name and (text or (rules.placeholder and wire.get("tool_calls"))):
                wire[name] = text
            elif send and not name and rules.placeholder and wire.get("tool_calls"):
                wire["reasoning_content"] = ""
        out.append(wire)
    return out


def _call(call: dict[str, Any], profile: Profile, same: bool) -> dict[str, Any]:
    """A tool call with its opaque fields kept only for the endpoint that sent them."""
    kept = {k: v for k, v in call.items() if k in KNOWN_CALL_FIELDS and k != "index"}
    if same:
        for key, value in call.items():
            if key not in KNOWN_CALL_FIELDS and profile.allows_echo(key, call=True):
                kept[key] = value
    return kept


def echoed_fields(messages: Sequence[dict[str, Any]]) -> set[str]:
    """Names of the non-standard fields in a request's messages (to recognise an endpoint refusing them)."""
    standard = {"role", "content", "tool_calls", "tool_call_id", "name"}
    names: set[str] = set()
    for msg in messages:
        names.update(k for k in msg if k not in standard)
        for call in msg.get("tool_calls") or []:
            names.update(k for k in call if k not in KNOWN_CALL_FIELDS)
    return names
