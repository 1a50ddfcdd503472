"""Settings of the conversation features: saved provider configurations, assistants, model prices.

- :class:`ProvidersSettings` holds several :class:`~weclaw_desktop.settings.schema.ProviderSettings` entries
  (each with its own keyring entry and model list) and which one new chats use (``active``).
- :class:`AssistantSettings` is a persona: name, icon, system prompt, default provider and model, the tools it
  may use (enforced by the loop through the round's exposure, not only hidden in the UI) and generation
  settings. :class:`AssistantsSettings` keeps the list and the default one; there is always at least one.
- :class:`ModelPrice` is what a model costs per million tokens (the user's, else a published preset value).

Data only, like the rest of the schema.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

DEFAULT_ASSISTANT = "weclaw"
ID_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,39}$"


class _Section(BaseModel):
    model_config = ConfigDict(extra="ignore", validate_assignment=True)


class ModelPrice(_Section):
    """Price of one model per million tokens, in ``currency`` (ISO 4217: USD, CNY, EUR ...)."""

    input_per_m: float = Field(default=0.0, ge=0, le=10_000)
    output_per_m: float = Field(default=0.0, ge=0, le=10_000)
    currency: str = Field(default="USD", pattern=r"^[A-Z]{3}$")


class GenerationSettings(_Section):
    """Sampling parameters sent with each request; None = not sent (the endpoint's default)."""

    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    max_tokens: int | None = Field(default=None, ge=1, le=1_000_000)
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)

    def request_fields(self) -> dict[str, Any]:
        """The body fields to send (only those that are set)."""
        return {k: v for k, v in self.model_dump().items() if v is not None}


class AssistantSettings(_Section):
    id: str = Field(pattern=ID_PATTERN, description="stable key, stored with each chat")
    name: str = Field(min_length=1, max_length=60)
    icon: str = Field(default="🤖", max_length=8, description="an emoji or up to 8 characters")
    system_prompt: str = Field(default="", max_length=20_000, description="added to WeClaw's own prompt")
    provider: str = Field(default="", description="name of a saved provider; '' = the active one")
    model: str = Field(default="", description="'' = the provider's model")
    tools: list[str] | None = Field(
        default=None, description="tool names or patterns it may use; None = every tool you allow; [] = none"
    )
    generation: GenerationSettings = Field(default_factory=GenerationSettings)

    def allows_tool(self, tool: str) -> bool:
        return tool_matcher(self.tools)(tool)


def tool_matcher(patterns: list[str] | tuple[str, ...] | None) -> Callable[[str], bool]:
    """Whether a tool is in a tool profile (names, ``*`` as a wildcard); None allows every tool."""
    if patterns is None:
        return lambda _tool: True
    regex = re.compile("|".join(".*".join(re.escape(x) for x in p.split("*")) for p in patterns) or r"(?!)")
    return lambda tool: regex.fullmatch(tool) is not None


def builtin_assistant() -> AssistantSettings:
    return AssistantSettings(id=DEFAULT_ASSISTANT, name="WeClaw", icon="🦀")


def _builtin_list() -> list[AssistantSettings]:
    return [builtin_assistant()]


class AssistantsSettings(_Section):
    default: str = Field(default=DEFAULT_ASSISTANT, description="the assistant a new chat starts from")
    entries: list[AssistantSettings] = Field(default_factory=_builtin_list)

    @field_validator("entries")
    @classmethod
    def _never_empty(cls, entries: list[AssistantSettings]) -> list[AssistantSettings]:
        """At least one assistant, ids unique (a later duplicate is dropped: the first one wins)."""
        seen: set[str] = set()
        kept = [a for a in entries if not (a.id in seen or seen.add(a.id))]  # type: ignore[func-returns-value]
        return kept or _builtin_list()

    def get(self, assistant_id: str) -> AssistantSettings | None:
        return next((a for a in self.entries if a.id == assistant_id), None)

    @property
    def current(self) -> AssistantSettings:
        """The default assistant (the first one when ``default`` names none)."""
        return self.get(self.default) or self.entries[0]

    def resolve(self, assistant_id: str) -> AssistantSettings:
        """The assistant a chat names; the default when it was deleted since."""
        return self.get(assistant_id) or self.current


def new_assistant_id(name: str, taken: set[str]) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:30] or "assistant"
    if not re.match(ID_PATTERN, base):
        base = "a-" + base
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    return candidate
