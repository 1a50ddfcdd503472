"""Chat titles: a cleaned first line at once, then (when a model is configured) a short title the model writes
from the first exchange, in a small side request. The user's own title is never replaced."""

from __future__ import annotations

import asyncio
import re
from typing import Any

MAX_TITLE = 48
TITLE_TIMEOUT_S = 20.0
_PROMPT = (
    "Write a title of at most 6 words (or 12 Chinese characters) for the conversation below, in the language of "
    "the user's message. Answer with the title only: no quotes, no full stop, no prefix like 'Title:'."
)


def clean_title(text: str, limit: int = MAX_TITLE) -> str:
    """The first line of ``text`` that says something, without Markdown, code, links or greetings, cut at a word."""
    lines = []
    in_code = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code or not line:
            continue
        lines.append(line)
    line = next((ln for ln in (_strip(x) for x in lines) if ln), "")
    if len(line) <= limit:
        return line
    cut = line[:limit]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,.;:，。；：、") + "…"


_GREETING = re.compile(r"^(hi|hello|hey|please|pls|你好|您好|请|麻烦|帮我)[\s,，!！:：]*", re.IGNORECASE)


def _strip(line: str) -> str:
    line = re.sub(r"https?://\S+", "", line)
    line = re.sub(r"`([^`]*)`", r"\1", line)
    line = re.sub(r"^[#>*\-+\s]+|^\d+[.)]\s+", "", line)
    line = re.sub(r"[*_~]{1,3}([^*_~]+)[*_~]{1,3}", r"\1", line)
    line = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", line)
    for _ in range(3):  # "你好，帮我..." / "Hi, please ..."
        line = _GREETING.sub("", line)
    return " ".join(line.split()).strip(" \"'“”")


def tidy_model_title(text: str) -> str:
    """What a model answered, as a title: first line, no "Title:", quotes or final punctuation."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    line = re.sub(r"^(title|标题)\s*[:：]\s*", "", line, flags=re.IGNORECASE)
    line = line.strip(" \"'“”「」《》*#").rstrip("。.!！")
    return clean_title(line)


async def model_title(provider: Any, user_text: str, answer: str) -> tuple[str, Any, list[dict[str, str]]]:
    """(title, completion, messages sent) from a short request; ('', None, ...) when it fails or takes longer
    than TITLE_TIMEOUT_S."""
    messages = [
        {"role": "system", "content": _PROMPT},
        {"role": "user", "content": f"User: {user_text[:1500]}\n\nAssistant: {answer[:1500]}"},
    ]
    try:
        async with asyncio.timeout(TITLE_TIMEOUT_S):
            completion = await provider.stream(messages, params={"max_tokens": 40})
    except Exception:  # a title is a nicety: any failure keeps the cleaned first line
        return "", None, messages
    return tidy_model_title(completion.text or ""), completion, messages
