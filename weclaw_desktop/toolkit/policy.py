"""Which tools the user and the administrator allow: profiles, allow and deny lists, per-tool switches.

Precedence, strongest first: the user's per-tool switch (off), the deny list, then the active profile
together with the allow list. Deny always wins over allow.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase

from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.toolkit.diagnostics import Code, Diagnostic


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatchcase(name, pattern) for pattern in patterns)


class Policy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    profile: str = "full"
    allow: list[str] = Field(default_factory=list, description="Tool name patterns added to the profile")
    deny: list[str] = Field(default_factory=list, description="Tool name patterns that are never offered")
    disabled: list[str] = Field(default_factory=list, description="Tools the user switched off")

    def check(self, tool: str, profiles: Mapping[str, list[str]]) -> Diagnostic | None:
        """None when ``tool`` is allowed, else why not."""
        if tool in self.disabled:
            return Diagnostic(
                code=Code.DISABLED_BY_USER,
                message="switched off by you",
                hint="Turn it back on in the tool panel.",
            )
        if _matches(tool, self.deny):
            return Diagnostic(
                code=Code.DISABLED_BY_POLICY,
                message="blocked by the deny list",
                hint="Remove it from Settings > Tools > Deny list.",
            )
        patterns = profiles.get(self.profile)
        if patterns is None:
            return Diagnostic(
                code=Code.DISABLED_BY_POLICY,
                message=f"the active profile '{self.profile}' does not exist",
                hint=f"Choose one of: {', '.join(sorted(profiles)) or 'none defined'}.",
            )
        if _matches(tool, patterns) or _matches(tool, self.allow):
            return None
        return Diagnostic(
            code=Code.DISABLED_BY_POLICY,
            message=f"not part of the '{self.profile}' profile",
            hint="Add it to the allow list or switch profile in Settings.",
        )

    def with_switch(self, tool: str, enabled: bool) -> Policy:
        disabled = [t for t in self.disabled if t != tool]
        if not enabled:
            disabled.append(tool)
        return self.model_copy(update={"disabled": sorted(disabled)})
