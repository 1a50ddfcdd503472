"""The model endpoint, split by job:

- ``profiles``: the per-provider rules, declared once in ``resources/providers.toml``;
- ``client``: :class:`Provider` (request, retries inside one budget, timeouts, fallbacks) and its config;
- ``sse``, ``assembly``, ``think``: reading the stream, joining chunks, ``<think>`` tags;
- ``messages``, ``request``: what is sent (reasoning and opaque fields per profile, thinking controls);
- ``capabilities``: what a model can do (user, endpoint, profile);
- ``errors``: :class:`ProviderError` and the classification of failures.
"""

from weclaw_desktop.agent.provider.assembly import AssembledCall, CallAssembler, Completion, Usage
from weclaw_desktop.agent.provider.capabilities import ModelCapabilities
from weclaw_desktop.agent.provider.client import NO_KEY_PLACEHOLDER, Provider, ProviderConfig, StreamTimeouts
from weclaw_desktop.agent.provider.errors import ProviderError
from weclaw_desktop.agent.provider.messages import META
from weclaw_desktop.agent.provider.profiles import Capabilities, Profile, get_profile, profile_for, profiles
from weclaw_desktop.agent.provider.request import ThinkingChoice, ThinkingUnsupported, check_thinking

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
    "profiles",
]
