"""User settings: the schema (``schema``) and the one owner of settings.json (``store.SettingsStore``).

Everything else reads ``store.settings`` and subscribes to changes; nothing but the store writes the file.
"""

from weclaw_desktop.settings.problems import EFFECTS, ProblemKind, SettingsProblem
from weclaw_desktop.settings.schema import (
    SECTIONS,
    AgentSettings,
    CompanionSettings,
    InvalidMcpServer,
    McpServerSettings,
    ModelCapabilitySettings,
    ProviderSettings,
    Settings,
    ToolSettings,
    UISettings,
)
from weclaw_desktop.settings.store import PROBLEMS, SettingsChange, SettingsStore

__all__ = [
    "EFFECTS",
    "PROBLEMS",
    "SECTIONS",
    "AgentSettings",
    "CompanionSettings",
    "InvalidMcpServer",
    "McpServerSettings",
    "ModelCapabilitySettings",
    "ProblemKind",
    "ProviderSettings",
    "Settings",
    "SettingsChange",
    "SettingsProblem",
    "SettingsStore",
    "ToolSettings",
    "UISettings",
]
