"""The model endpoint, split by job:

- ``profiles``: the per-provider rules, declared once in ``resources/providers.toml``;
- ``client``: :class:`Provider` (request, retries inside one budget, timeouts, fallbacks) and its config;
- ``sse``, ``assembly``, ``think``: reading the stream, joining chunks, ``<think>`` tags;
- ``messages``, ``request``: what is sent (reasoning and opaque fields per profile, thinking controls);
- ``capabilities``: what a model can do (user, endpoint, profile);
- ``errors``: :class:`ProviderError` and the classification of failures.


Names are loaded on first use: ``profiles`` (read by the presets at window start-up) must not pull in the
openai SDK, which only ``client`` needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from weclaw_desktop.agent.provider.assembly import AssembledCall, CallAssembler, Completion, Usage
    from weclaw_desktop.agent.provider.capabilities import ModelCapabilities
    from weclaw_desktop.agent.provider.client import NO_KEY_PLACEHOLDER, Provider, ProviderConfig, StreamTimeouts
    from weclaw_desktop.agent.provider.errors import ProviderError
    from weclaw_desktop.agent.provider.messages import META
    from weclaw_desktop.agent.provider.profiles import Capabilities, Profile, get_profile, profile_for
    from weclaw_desktop.agent.provider.request import ThinkingChoice, ThinkingUnsupported, check_thinking

_WHERE = {
    "AssembledCall": "assembly",
    "CallAssembler": "assembly",
    "Completion": "assembly",
    "Usage": "assembly",
    "ModelCapabilities": "capabilities",
    "NO_KEY_PLACEHOLDER": "client",
    "Provider": "client",
    "ProviderConfig": "client",
    "StreamTimeouts": "client",
    "ProviderError": "errors",
    "META": "messages",
    "Capabilities": "profiles",
    "Profile": "profiles",
    "get_profile": "profiles",
    "profile_for": "profiles",
    "ThinkingChoice": "request",
    "ThinkingUnsupported": "request",
    "check_thinking": "request",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = [
    "META",
    "NO_KEY_PLACEHOLDER",
    "AssembledCall",
    "CallAssembler",
    "Capabilities",
    "Completion",
    "ModelCapabilities",
    "Profile",
    "Provider",
    "ProviderConfig",
    "ProviderError",
    "StreamTimeouts",
    "ThinkingChoice",
    "ThinkingUnsupported",
    "Usage",
    "check_thinking",
    "get_profile",
    "profile_for",
]
