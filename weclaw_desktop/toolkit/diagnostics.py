"""Why a tool is hidden: a stable code plus a human message and what to do about it."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class Code(StrEnum):
    """Stable diagnostic codes. The tool panel, ``weclaw tools`` and the logs use them."""

    BRIDGE_MISSING = "bridge-missing"
    CONFIG_MISSING = "config-missing"
    AUTH_MISSING = "auth-missing"
    ENV_MISSING = "env-missing"
    DEPENDENCY_MISSING = "dependency-missing"
    PLATFORM_UNSUPPORTED = "platform-unsupported"
    DISABLED_BY_POLICY = "disabled-by-policy"
    DISABLED_BY_USER = "disabled-by-user"
    DISABLED_SETTINGS_UNREADABLE = (
        "disabled-settings-unreadable"  # off until the user's settings can be read (fail closed)
    )
    DISABLED_IN_MANIFEST = "disabled-in-manifest"
    CIRCUIT_OPEN = "circuit-open"
    LOAD_FAILED = "load-failed"
    SERVER_UNAVAILABLE = "server-unavailable"


class Diagnostic(BaseModel):
    model_config = ConfigDict(frozen=True)

    code: Code
    message: str
    hint: str = ""

    def __str__(self) -> str:
        text = f"[{self.code.value}] {self.message.rstrip('.')}."
        return f"{text} {self.hint}" if self.hint else text
