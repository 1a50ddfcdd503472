"""The system prompt: who the assistant is, the user's language, today's date and OS, how to use tools.

Nothing machine-specific is hard-coded: the date, OS and folders come from the running system and the
settings at the start of each turn.
"""

from __future__ import annotations

import platform
import re
from datetime import datetime
from pathlib import Path

from weclaw_desktop.i18n import has_chinese, language_of, resolve_language


def user_language(setting: str, text: str) -> str:
    """'zh' or 'en': the UI setting when explicit, else the message's script, else the system's languages."""
    explicit = language_of(setting) if setting != "system" else None
    if explicit is not None:
        return explicit
    if has_chinese(text):
        return "zh"
    if re.search(r"[A-Za-z]", text):
        return "en"
    return resolve_language("system")


def os_description() -> str:
    system = platform.system() or "unknown OS"
    if system == "Darwin":
        return f"macOS {platform.mac_ver()[0]}".strip()
    if system == "Windows":
        return f"Windows {platform.release()}"
    return f"{system} {platform.release()}".strip()


def system_prompt(
    *,
    language: str,
    outputs_dir: Path,
    now: datetime | None = None,
    os_name: str | None = None,
    has_tools: bool = True,
) -> str:
    now = now or datetime.now().astimezone()
    lang = "Chinese (简体中文)" if language == "zh" else "English"
    lines = [
        "You are WeClaw, a desktop assistant that gets things done on the user's computer with tools.",
        f"Answer in the language the user writes in; if unsure, use {lang}.",
        f"Today is {now:%A, %Y-%m-%d}, local time {now:%H:%M} ({now.tzname() or 'local time zone'}).",
        f"The computer runs {os_name or os_description()}.",
    ]
    if has_tools:
        lines += [
            "How to use tools:",
            "- Use a tool when it gives a better answer than you can alone; otherwise just answer.",
            "- Call independent tools together in one step; wait for results before calls that depend on them.",
            "- Read each tool result. If it reports an error, fix the arguments or choose another way; "
            "never repeat an identical failing call.",
            "- Never invent results, file names or paths. Report what the tools actually returned.",
            f"- Files you create go to {outputs_dir} unless the user names another place.",
            "- If no available tool fits, say so, or use tool_search_find (when offered) to look for one.",
            "- Ask before doing something the user did not clearly ask for.",
        ]
    lines.append("Keep answers short and concrete.")
    return "\n".join(lines)
