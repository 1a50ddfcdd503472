"""The settings schema: one pydantic model per section of ``settings.json`` (secrets never: see secrets.py).

These models are data only. Reading and writing the file is :class:`~weclaw_desktop.settings.store.SettingsStore`'s
job (field-by-field validation, fail-closed fallbacks, atomic saves, change notifications).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from weclaw_desktop.paths import AppPaths, app_paths
from weclaw_desktop.settings.conversation import AssistantsSettings, ModelPrice
from weclaw_desktop.settings.migrations import CURRENT_VERSION, provider_list
from weclaw_desktop.toolkit.approval import ApprovalPolicy
from weclaw_desktop.toolkit.policy import Policy


class _Section(BaseModel):
    model_config = ConfigDict(extra="ignore", validate_assignment=True)


class ModelCapabilitySettings(_Section):
    """What the user says a model can do (None = not set: the endpoint's or the profile's value is used)."""

    tools: bool | None = None
    vision: bool | None = None
    reasoning: bool | None = None
    context: int | None = Field(default=None, gt=0)


class ProviderSettings(_Section):
    """One saved provider configuration (an entry of ``providers.entries``)."""

    name: str = Field(default="default", min_length=1, max_length=40, description="shown in the model switcher")
    preset: str = Field(default="", description="key of a preset in agent/presets.py; '' = not set up yet")
    base_url: str = ""
    model: str = ""
    api_key_name: str = Field(default="api_key", description="keyring entry that holds the key")
    timeout_s: float = Field(default=120.0, gt=0, description="non-streamed requests (model list)")
    max_retries: int = Field(default=2, ge=0, le=10)
    # thinking controls of the provider's profile (resources/providers.toml)
    thinking: Literal["default", "on", "off"] = Field(default="default", description="'default' = the endpoint's")
    reasoning_effort: str = Field(default="", max_length=20, description="'' = the endpoint's default level")
    # stream robustness: an unresponsive endpoint is reported within first_token_timeout_s, retries included
    connect_timeout_s: float = Field(default=10.0, gt=0, le=120)
    first_token_timeout_s: float = Field(default=60.0, gt=0, le=3600)
    idle_timeout_s: float = Field(default=60.0, gt=0, le=3600, description="silence allowed mid-answer")
    capabilities: dict[str, ModelCapabilitySettings] = Field(
        default_factory=dict, description="per model: what the user says it can do"
    )
    models: list[str] = Field(default_factory=list, description="models offered in the switcher ([] = just model)")
    prices: dict[str, ModelPrice] = Field(default_factory=dict, description="per model, per million tokens")

    @property
    def configured(self) -> bool:
        return bool(self.base_url and self.model)

    def model_choices(self) -> list[str]:
        """The models of this configuration for the switcher: the default one first, no duplicates."""
        return list(dict.fromkeys(m for m in [self.model, *self.models] if m))


def _one_provider() -> list[ProviderSettings]:
    return [ProviderSettings()]


class ProvidersSettings(_Section):
    """Saved provider configurations; ``active`` is the one new chats (and ``weclaw chat``) use."""

    active: str = "default"
    entries: list[ProviderSettings] = Field(default_factory=_one_provider)

    @field_validator("entries")
    @classmethod
    def _never_empty(cls, entries: list[ProviderSettings]) -> list[ProviderSettings]:
        """At least one entry; names unique (a later duplicate is renamed "name (2)", never dropped)."""
        seen: set[str] = set()
        for entry in entries:
            name, n = entry.name, 2
            while name in seen:
                name, n = f"{entry.name} ({n})"[:40], n + 1
            if name != entry.name:
                entry.name = name
            seen.add(name)
        return entries or _one_provider()

    def get(self, name: str) -> ProviderSettings | None:
        return next((p for p in self.entries if p.name == name), None)

    @property
    def current(self) -> ProviderSettings:
        """The active entry (the first when ``active`` names none)."""
        return self.get(self.active) or self.entries[0]

    def key_names(self) -> set[str]:
        return {p.api_key_name for p in self.entries}


class AgentSettings(_Section):
    max_rounds: int = Field(default=12, ge=1, le=100)
    exposure: Literal["progressive", "all"] = "progressive"
    approvals: ApprovalPolicy = Field(default_factory=ApprovalPolicy)
    result_cap_chars: int = Field(default=16_000, ge=1_000, le=1_000_000, description="per tool result")
    turn_result_budget_chars: int = Field(default=100_000, ge=1_000, le=10_000_000, description="tool results per turn")
    loop_guard_repeats: int = Field(default=3, ge=2, le=20, description="identical calls that stop a turn")
    circuit_breaker_failures: int = Field(default=3, ge=1, le=20, description="failures in a row that hide a tool")
    model_titles: bool = Field(default=True, description="a new chat's title is written by its model (a small request)")


class ToolSettings(_Section):
    policy: Policy = Field(default_factory=Policy)
    config: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="per-tool config overrides on top of tools.json (e.g. email host)"
    )
    outputs_dir: str = Field(default="", description="where tools put files they create; '' = data dir")
    allowed_roots: list[str] = Field(default_factory=list, description="file tool roots; [] = home folder")


class UISettings(_Section):
    language: Literal["system", "en", "zh"] = "system"
    theme: Literal["system", "light", "dark"] = "system"
    close_to_tray: bool = False
    window_geometry: str = ""


class CompanionSettings(_Section):
    enabled: bool = False
    interface: str = Field(default="", description="IP address to bind; '' = best LAN address")
    port: int = Field(default=8765, ge=0, le=65535)
    incoming_dir: str = Field(default="", description="where files from the phone go; '' = data dir/incoming")
    auto_accept: bool = False
    max_upload_mb: int = Field(default=4096, ge=1)


class McpServerSettings(_Section):
    """One MCP server. Checked on its own at load (``mcp_entries.parse_servers``): a bad entry never
    touches the others. Add a transport by extending ``transport`` and ``mcp_entries.entry_problem``."""

    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,32}$")
    enabled: bool = True
    transport: Literal["stdio", "http", "sse"] = Field(
        default="stdio", description="stdio: a local program; http: streamable HTTP; sse: the legacy HTTP+SSE"
    )
    command: str = ""
    args: list[str] = Field(default_factory=list)
    cwd: str = Field(default="", description="working folder of a stdio server; '' = WeClaw's")
    env: dict[str, str] = Field(default_factory=dict, description="plain environment values")
    secret_env: list[str] = Field(default_factory=list, description="env names whose values are in the keyring")
    url: str = ""
    headers: dict[str, str] = Field(default_factory=dict)
    secret_headers: list[str] = Field(default_factory=list, description="header names kept in the keyring")
    trusted: bool = False
    keywords: list[str] = Field(default_factory=list)
    timeout_s: float = Field(default=60.0, gt=0)
    auth: Literal["none", "oauth"] = Field(
        default="none", description="oauth: sign in with OAuth 2.1 (remote servers); the tokens live in the keyring"
    )
    tool_approval: dict[str, Literal["ask", "allow", "deny"]] = Field(
        default_factory=dict,
        description="per server tool (by its own name): ask first, allow without asking, or deny (not offered)",
    )


class InvalidMcpServer(BaseModel):
    """An ``mcp_servers`` entry that cannot be used, kept exactly as the user wrote it (never started).

    The store writes ``raw`` back at ``index`` until the user edits the entry (the MCP page turns it into
    a :class:`McpServerSettings` draft) or removes it."""

    model_config = ConfigDict(frozen=True)

    raw: Any
    errors: list[str]
    index: int = 0

    @property
    def name(self) -> str:
        """The entry's name as written ('' when it has none), for display only."""
        name = self.raw.get("name") if isinstance(self.raw, dict) else None
        return name if isinstance(name, str) else ""

    @property
    def error(self) -> str:
        return "; ".join(self.errors)


class Settings(_Section):
    version: int = CURRENT_VERSION
    providers: ProvidersSettings = Field(default_factory=ProvidersSettings)
    assistants: AssistantsSettings = Field(default_factory=AssistantsSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    tools: ToolSettings = Field(default_factory=ToolSettings)
    ui: UISettings = Field(default_factory=UISettings)
    companion: CompanionSettings = Field(default_factory=CompanionSettings)
    mcp_servers: list[McpServerSettings] = Field(default_factory=list)
    mcp_invalid: list[InvalidMcpServer] = Field(
        default_factory=list, exclude=True, description="entries of mcp_servers that cannot be used (kept raw)"
    )

    @model_validator(mode="before")
    @classmethod
    def _legacy_provider(cls, data: Any) -> Any:
        """``Settings(provider=...)`` and a version-1 ``{"provider": {...}}`` mean a list of one entry."""
        if isinstance(data, dict) and "provider" in data and "providers" not in data:
            data = dict(data)
            single = data.pop("provider")
            if isinstance(single, BaseModel):
                single = single.model_dump()
            data["providers"] = provider_list(single)
        return data

    @property
    def provider(self) -> ProviderSettings:
        """The active provider configuration (an entry of ``providers``: changes to it are changes of that entry)."""
        return self.providers.current

    @provider.setter
    def provider(self, value: ProviderSettings) -> None:
        """Replace the active configuration (keeps its name; for code written when there was only one)."""
        current = self.providers.current
        entry = value.model_copy(update={"name": current.name})
        self.providers.entries = [entry if e is current else e for e in self.providers.entries]

    def outputs_dir(self, paths: AppPaths | None = None) -> Path:
        return Path(self.tools.outputs_dir).expanduser() if self.tools.outputs_dir else (paths or app_paths()).outputs


#: The top-level sections a change notification names.
SECTIONS = ("providers", "assistants", "agent", "tools", "ui", "companion", "mcp_servers")
