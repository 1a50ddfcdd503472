"""User settings: one pydantic model saved as JSON in the config dir (secrets never: see secrets.py).

Unknown keys from a newer version are ignored on load, so a downgrade does not lose the file; a broken
file is moved aside (``settings.json.broken-<time>``) and defaults are used, never a crash.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from weclaw_desktop.paths import AppPaths, app_paths
from weclaw_desktop.toolkit.approval import ApprovalPolicy
from weclaw_desktop.toolkit.policy import Policy

log = logging.getLogger("weclaw.settings")


class _Section(BaseModel):
    model_config = ConfigDict(extra="ignore", validate_assignment=True)


class ModelCapabilitySettings(_Section):
    """What the user says a model can do (None = not set: the endpoint's or the profile's value is used)."""

    tools: bool | None = None
    vision: bool | None = None
    reasoning: bool | None = None
    context: int | None = Field(default=None, gt=0)


class ProviderSettings(_Section):
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

    @property
    def configured(self) -> bool:
        return bool(self.base_url and self.model)


class AgentSettings(_Section):
    max_rounds: int = Field(default=12, ge=1, le=100)
    exposure: Literal["progressive", "all"] = "progressive"
    approvals: ApprovalPolicy = Field(default_factory=ApprovalPolicy)
    result_cap_chars: int = Field(default=16_000, ge=1_000, le=1_000_000, description="per tool result")
    turn_result_budget_chars: int = Field(default=100_000, ge=1_000, le=10_000_000, description="tool results per turn")
    loop_guard_repeats: int = Field(default=3, ge=2, le=20, description="identical calls that stop a turn")
    circuit_breaker_failures: int = Field(default=3, ge=1, le=20, description="failures in a row that hide a tool")


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
    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,32}$")
    enabled: bool = True
    transport: Literal["stdio", "http"] = "stdio"
    command: str = ""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict, description="plain environment values")
    secret_env: list[str] = Field(default_factory=list, description="env names whose values are in the keyring")
    url: str = ""
    headers: dict[str, str] = Field(default_factory=dict)
    secret_headers: list[str] = Field(default_factory=list, description="header names kept in the keyring")
    trusted: bool = False
    keywords: list[str] = Field(default_factory=list)
    timeout_s: float = Field(default=60.0, gt=0)


class Settings(_Section):
    version: int = 1
    provider: ProviderSettings = Field(default_factory=ProviderSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    tools: ToolSettings = Field(default_factory=ToolSettings)
    ui: UISettings = Field(default_factory=UISettings)
    companion: CompanionSettings = Field(default_factory=CompanionSettings)
    mcp_servers: list[McpServerSettings] = Field(default_factory=list)

    @classmethod
    def load(cls, paths: AppPaths | None = None) -> Settings:
        paths = paths or app_paths()
        path = paths.settings_file
        if not path.exists():
            return cls()
        try:
            return cls.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, ValidationError) as exc:
            aside = path.with_name(f"{path.name}.broken-{int(time.time())}")
            log.error("settings file %s is unreadable (%s); moved to %s, using defaults", path, exc, aside)
            with contextlib.suppress(OSError):
                path.replace(aside)
            return cls()

    def save(self, paths: AppPaths | None = None) -> Path:
        """Write atomically (temp file + rename) so a crash or full disk never leaves half a file."""
        paths = paths or app_paths()
        path = paths.settings_file
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.model_dump(mode="json"), ensure_ascii=False, indent=2)
        fd, tmp = tempfile.mkstemp(prefix=".settings-", suffix=".json", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path

    def outputs_dir(self, paths: AppPaths | None = None) -> Path:
        return Path(self.tools.outputs_dir).expanduser() if self.tools.outputs_dir else (paths or app_paths()).outputs
