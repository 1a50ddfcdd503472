"""Provider profiles: the rules of each OpenAI-compatible provider, declared once as data (``resources/providers.toml``).

A profile says how reasoning arrives, what must be sent back and when, which opaque fields are echoed verbatim,
how thinking is switched and tuned, which request parameters the endpoint rejects, and what is known about its
models. The provider code reads these rules; it has no per-provider branches.

:func:`profile_for` picks the profile of a configuration: the preset key when one is set, else the profile whose
host matches the base URL (a DeepSeek URL typed by hand still gets DeepSeek's rules), else ``custom``.
"""

from __future__ import annotations

import fnmatch
import functools
import tomllib
from typing import Any, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from weclaw_desktop.paths import resource_path

PROFILES_FILE = ("providers.toml",)
SendBack = Literal["never", "tool_turns", "always"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ReasoningRules(_Strict):
    """How reasoning text arrives and what goes back."""

    fields: list[str] = Field(description="delta/message fields with reasoning text, in order of preference")
    details_field: str = Field(default="", description="structured reasoning blocks (kept and echoed verbatim)")
    think_tags: list[str] = Field(description="tag names whose <tag>…</tag> inside content is reasoning")
    send_back: SendBack = Field(description="when stored reasoning is sent back in later requests")
    send_field: str = Field(default="", description="field reasoning is sent back in ('' = the field it came in)")
    placeholder: bool = Field(default=False, description="send an empty reasoning field on tool-call turns without any")


class EchoRules(_Strict):
    """Opaque fields returned exactly as the endpoint sent them."""

    message_fields: list[str] = Field(description="fields of an assistant message")
    call_fields: list[str] = Field(description="fields of a tool call (e.g. Gemini's extra_content signature)")
    unknown: bool = Field(description="also keep and return fields this app does not know")


class ThinkingControls(_Strict):
    """How thinking is switched and tuned: request body fields merged in."""

    default: Literal["on", "off", "model"] = Field(description="what the endpoint does when nothing is sent")
    on: dict[str, Any] = Field(description="body fields that switch thinking on")
    off: dict[str, Any] | None = Field(default=None, description="body fields that switch it off; None = cannot")
    effort_path: str = Field(description="dotted body path of the effort level ('' = not tunable)")
    efforts: list[str] = Field(description="effort levels the endpoint accepts")

    @property
    def can_disable(self) -> bool:
        return self.off is not None


class Capabilities(_Strict):
    """What a model can do. None = not known (treated as yes for tools, so nothing is withheld by guesswork)."""

    tools: bool | None = None
    vision: bool | None = None
    reasoning: bool | None = None
    context: int | None = Field(default=None, gt=0)

    def merged(self, other: Capabilities) -> Capabilities:
        """These values, with ``other`` filling what is unknown here."""
        return Capabilities(
            tools=self.tools if self.tools is not None else other.tools,
            vision=self.vision if self.vision is not None else other.vision,
            reasoning=self.reasoning if self.reasoning is not None else other.reasoning,
            context=self.context if self.context is not None else other.context,
        )

    @property
    def empty(self) -> bool:
        return self.tools is None and self.vision is None and self.reasoning is None and self.context is None


class ModelsInfo(_Strict):
    listing: Literal["openai", "none"] = Field(description="GET /models lists the models ('none': suggestions only)")
    capabilities: Literal["none", "openrouter", "ollama", "lmstudio"] = Field(
        description="where the endpoint tells a model's capabilities"
    )
    known: dict[str, Capabilities] = Field(default_factory=dict, description="model name or glob -> capabilities")

    def lookup(self, model: str) -> Capabilities:
        """Known capabilities of ``model``: an exact name first, then the first matching glob."""
        if model in self.known:
            return self.known[model]
        for pattern, caps in self.known.items():
            if any(ch in pattern for ch in "*?[") and fnmatch.fnmatchcase(model, pattern):
                return caps
        return Capabilities()


class Profile(_Strict):
    key: str
    label: str
    label_zh: str = Field(default="", description="the Chinese label when it is not just ``label``")
    base_url: str
    hosts: list[str] = Field(description="host names that identify this provider in a typed URL")
    needs_key: bool
    key_url: str
    default_model: str
    rejects: list[str] = Field(description="request parameters the endpoint refuses; never sent")
    sources: list[str] = Field(description="documentation the rules were checked against")
    reasoning: ReasoningRules
    echo: EchoRules
    thinking: ThinkingControls
    models: ModelsInfo

    @property
    def stream_usage(self) -> bool:
        return "stream_options" not in self.rejects

    def allows_echo(self, name: str, *, call: bool = False) -> bool:
        """Whether an opaque field ``name`` the endpoint sent is returned to it."""
        listed = self.echo.call_fields if call else self.echo.message_fields
        return name in listed or self.echo.unknown


class _File(_Strict):
    providers: dict[str, dict[str, Any]]


class ProfileError(ValueError):
    """The profiles file is broken (a bug in the shipped data, caught by the tests)."""


@functools.cache
def profiles() -> dict[str, Profile]:
    """Every profile by key, in file order (the order presets are offered in)."""
    path = resource_path(*PROFILES_FILE)
    try:
        raw = _File.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
        return {key: Profile.model_validate({"key": key, **entry}) for key, entry in raw.providers.items()}
    except (OSError, tomllib.TOMLDecodeError, ValidationError) as exc:
        raise ProfileError(f"{path}: {exc}") from exc


def get_profile(key: str) -> Profile:
    """The profile ``key``; unknown or empty keys give ``custom``."""
    table = profiles()
    return table.get(key) or table["custom"]


def profile_for_url(base_url: str) -> Profile:
    """The profile whose base URL or host matches ``base_url``, else ``custom``."""
    url = base_url.rstrip("/")
    table = profiles()
    for profile in table.values():
        if profile.base_url and profile.base_url.rstrip("/") == url:
            return profile
    host = (urlparse(url).hostname or "").lower()
    if host:
        for profile in table.values():
            if host in profile.hosts:
                return profile
    return table["custom"]


def profile_for(preset: str, base_url: str) -> Profile:
    """The profile of a configuration: its preset when set (and not custom), else by URL."""
    table = profiles()
    if preset and preset != "custom" and preset in table:
        return table[preset]
    return profile_for_url(base_url)
