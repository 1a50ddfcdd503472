"""What people read about a tool call: its status line, its running and waiting times, and why it did
not run or did not finish — in the UI language, from the call's typed outcome (status, error kind, who
decided), never the text written for the model.

The wording is data: :data:`OUTCOME_KEYS` maps (status, error kind, who decided) to catalogue keys,
most specific first.
"""

from __future__ import annotations

import re

from weclaw_desktop.agent.call_times import NO_RUNNING_TIME, WAIT_SHOWN_S, format_seconds, wait_text
from weclaw_desktop.i18n import has, pick, tr
from weclaw_desktop.toolkit.registry import ToolRegistry
from weclaw_desktop.ui.tool_board import CallInfo

__all__ = [
    "OUTCOME_KEYS",
    "TOOL_WORDS",
    "WAIT_SHOWN_S",
    "action_name",
    "call_status_text",
    "format_seconds",
    "outcome_key",
    "outcome_text",
    "progress_message",
    "tool_name",
]

#: (status, error kind, decided by) -> catalogue key under ``card.why``; "*" matches anything.
OUTCOME_KEYS: list[tuple[str, str, str, str]] = [
    ("denied", "*", "user", "denied_user"),
    ("denied", "*", "policy", "denied_policy"),
    ("denied", "*", "rule", "denied_rule"),
    ("denied", "*", "no_gate", "denied_no_gate"),
    ("denied", "*", "auto", "denied_auto"),
    ("denied", "*", "hook", "denied_hook"),
    ("*", "not-offered", "*", "not_offered"),
    ("*", "disabled", "*", "disabled"),
    ("*", "unavailable", "*", "unavailable"),
    ("*", "unknown-function", "*", "unknown_function"),
    ("*", "circuit-open", "*", "circuit_open"),
    ("*", "loop-guard", "*", "loop_guard"),
    ("*", "invalid-json", "*", "invalid_arguments"),
    ("*", "invalid-arguments", "*", "invalid_arguments"),
    ("*", "load-failed", "*", "load_failed"),
    ("*", "hook-failed", "*", "hook_failed"),
    ("cancelled", "*", "*", "cancelled"),
    ("interrupted", "*", "*", "interrupted"),
    ("timeout", "*", "*", "timeout"),
    ("denied", "*", "*", "denied"),
]

#: Outcomes where the tool's own error text is worth showing under the explanation (the tool ran).
TOOL_WORDS = frozenset({"error", "timeout"})


#: A progress message that starts by repeating the elapsed time ("running 3 s: 7/36 files"); the
#: status text already shows the elapsed time, so the repeat is dropped.
_ELAPSED_PREFIX = re.compile(r"^\s*running\s+\d+(?:\.\d+)?\s*s\b[:\s]*", re.IGNORECASE)


def progress_message(call: CallInfo) -> str:
    """The call's progress message without a leading "running N s" (the elapsed time is shown anyway)."""
    return _ELAPSED_PREFIX.sub("", call.message or "").strip()


def call_status_text(call: CallInfo, *, compact: bool = False) -> str:
    """ "Running 3.7 s · 42% · message" / "Succeeded · 75 ms · waited 44 s for approval". ``compact`` (the
    narrow tool panel) leaves out the progress message, a finished call's duration and the wait. A finished
    call's times are said as ``agent/call_times.py`` says them everywhere else (CLI, export, Calls tab)."""
    short = f"status.{call.status}.short"
    key = short if compact and has(short) else f"status.{call.status}"
    text = tr(key) if has(key) else call.status
    elapsed = call.elapsed_s()
    if call.status == "running":
        if elapsed is not None:
            text += f" {format_seconds(elapsed)}"
        if call.fraction is not None:
            text += f" · {call.fraction * 100:.0f}%"
        message = progress_message(call)
        if message and not compact:
            text += f" · {message}"
    elif call.status == "awaiting_approval" and not compact:
        text += f" {format_seconds(call.waiting_s())}"
    elif call.finished and elapsed is not None and call.status not in NO_RUNNING_TIME and not compact:
        text += f" · {format_seconds(elapsed)}"
    if not compact and call.finished and call.status != "denied" and call.waited_s >= WAIT_SHOWN_S:
        # the wait matters beside a running time; a denied call never ran
        text += " · " + wait_text(call.waited_s)
    return text


def outcome_key(call: CallInfo) -> str | None:
    """The ``card.why.*`` key explaining a call that did not succeed, or None (it succeeded / the tool says)."""
    if call.status in ("success", "queued", "running", "awaiting_approval"):
        return None
    for status, kind, decided, key in OUTCOME_KEYS:
        if status not in ("*", call.status) or kind not in ("*", call.error_kind):
            continue
        if decided not in ("*", call.decided_by):
            continue
        return f"card.why.{key}"
    return None


def outcome_text(call: CallInfo) -> str:
    key = outcome_key(call)
    return tr(key) if key is not None else ""


def action_name(registry: ToolRegistry, tool: str, action: str) -> str:
    """The action's display name from tools.json (``display.actions``), else its id."""
    if tool and registry.has_tool(tool):
        names = registry.spec(tool).display.actions
        if action in names:
            return pick(names[action])
    return action


def tool_name(registry: ToolRegistry, call: CallInfo) -> str:
    if call.tool and registry.has_tool(call.tool):
        return pick(registry.spec(call.tool).display.name)
    return call.function or "?"
