"""What a model can do (tools, vision, reasoning), for the model switcher and for the turn (images are refused
for a model that cannot see them).

One function, :func:`capabilities`: the provider's own answer when the provider has one (``Provider.capabilities``
from the provider-profiles work: the user's overrides, the endpoint's listing, the profile), else the user's
overrides in the configuration, else a small table of well-known model families. None = unknown (then images are
sent and tools offered: the endpoint decides).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("weclaw.models")


@dataclass(frozen=True)
class Caps:
    tools: bool | None = None
    vision: bool | None = None
    reasoning: bool | None = None


#: Well-known families, first match wins: (pattern on the model id, tools, vision, reasoning).
KNOWN: tuple[tuple[str, bool | None, bool | None, bool | None], ...] = (
    (r"deepseek-reasoner|deepseek-r1", True, False, True),
    (r"deepseek", True, False, None),
    (r"^o\d|gpt-5", True, True, True),
    (r"gpt-4o|gpt-4\.1|gpt-4-turbo|chatgpt-4o", True, True, False),
    (r"gpt-3\.5", True, False, False),
    (r"claude", True, True, None),
    (r"gemini", True, True, None),
    (r"qwq|qwen3.*thinking", True, False, True),
    (r"qwen.*vl|qvq", True, True, None),
    (r"qwen", True, False, None),
    (r"glm-4\.?\dv|glm-4v", None, True, None),
    (r"glm", True, False, None),
    (r"kimi.*vision|moonshot.*vision", True, True, None),
    (r"kimi|moonshot", True, False, None),
    (r"llava|vision|-vl\b|pixtral|minicpm-v", None, True, None),
)


def known(model: str) -> Caps:
    name = model.lower()
    for pattern, tools, vision, reasoning in KNOWN:
        if re.search(pattern, name):
            return Caps(tools, vision, reasoning)
    return Caps()


def from_settings(entry: Any, model: str) -> Caps:
    """The user's overrides for ``model`` in a provider configuration (``capabilities`` per model), if any."""
    own = (getattr(entry, "capabilities", None) or {}).get(model)
    if own is None:
        return Caps()
    return Caps(getattr(own, "tools", None), getattr(own, "vision", None), getattr(own, "reasoning", None))


def merged(*layers: Caps) -> Caps:
    """Each field from the first layer that knows it."""
    out: dict[str, bool | None] = {}
    for name in ("tools", "vision", "reasoning"):
        out[name] = next((getattr(c, name) for c in layers if getattr(c, name) is not None), None)
    return Caps(**out)


async def capabilities(provider: Any, entry: Any, model: str) -> Caps:
    ask = getattr(provider, "capabilities", None)
    if callable(ask):
        try:
            resolved = await ask()
            caps = getattr(resolved, "caps", resolved)
            return merged(
                Caps(getattr(caps, "tools", None), getattr(caps, "vision", None), getattr(caps, "reasoning", None)),
                known(model),
            )
        except Exception:  # capabilities are advice: never let them break a turn
            log.exception("could not resolve the capabilities of %s", model)
    return merged(from_settings(entry, model), known(model))
