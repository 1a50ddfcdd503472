"""Keep secrets out of logs, audit records and error summaries.

Known secret values (API keys and passwords loaded from the keyring) are registered here and replaced
wherever text is redacted; common token shapes are masked even when unregistered.
"""

from __future__ import annotations

import re
import threading

_lock = threading.Lock()
_secrets: set[str] = set()

_PATTERNS = [
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._\-]{8,}"),
    re.compile(r"(?i)\b(api[_-]?key|password|passwd|token|secret)(\"?\s*[:=]\s*\"?)[^\s\"',;]{4,}"),
]


def register_secret(value: str | None) -> None:
    """Remember a secret value so :func:`redact` removes it. Short values are ignored (too many hits)."""
    if value and len(value) >= 6:
        with _lock:
            _secrets.add(value)


def known_secrets() -> frozenset[str]:
    with _lock:
        return frozenset(_secrets)


def redact(text: str) -> str:
    if not text:
        return text
    for value in sorted(known_secrets(), key=len, reverse=True):
        text = text.replace(value, "***")
    text = _PATTERNS[0].sub("sk-***", text)
    text = _PATTERNS[1].sub(lambda m: f"{m.group(1)} ***", text)
    text = _PATTERNS[2].sub(lambda m: f"{m.group(1)}{m.group(2)}***", text)
    return text
