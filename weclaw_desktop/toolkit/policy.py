"""Which tools the user and the administrator allow: profiles, allow and deny lists, per-tool switches.

Precedence, strongest first: the user's per-tool switch (off), the deny list, then the active profile
together with the allow list, then ``disabled_risks``. Deny always wins over allow.

``disabled_risks`` is how the settings store fails closed when the deny list or the switches cannot be
read: tools whose highest action risk is listed are off (diagnostic ``disabled-settings-unreadable``) unless the
user switched them back on (``enabled``). It needs the tools' risks, so callers pass ``risk_of``.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.toolkit.diagnostics import Code, Diagnostic


@functools.lru_cache(maxsize=256)
def _matcher(patterns: tuple[str, ...]) -> Callable[[str], bool]:
    if not patterns:
        return lambda name: False
    if "*" in patterns:
        return lambda name: True
    regex = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))
    return lambda name: regex.match(name) is not None


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return _matcher(tuple(patterns))(name)


class Policy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    profile: str = "full"
    allow: list[str] = Field(default_factory=list, description="Tool name patterns added to the profile")
    deny: list[str] = Field(default_factory=list, description="Tool name patterns that are never offered")
    disabled: list[str] = Field(default_factory=list, description="Tools the user switched off")
    disabled_risks: list[Literal["low", "medium", "high"]] = Field(
        default_factory=list,
        description="Tools with an action of these risks are off (set when the switches could not be read)",
    )
    enabled: list[str] = Field(
        default_factory=list, description="Tools the user switched back on although disabled_risks covers them"
    )

    def check(
        self, tool: str, profiles: Mapping[str, list[str]], risk_of: Callable[[str], str] | None = None
    ) -> Diagnostic | None:
        """None when ``tool`` is allowed, else why not."""
        return self.compiled(profiles, risk_of)(tool)

    def compiled(
        self, profiles: Mapping[str, list[str]], risk_of: Callable[[str], str] | None = None
    ) -> Callable[[str], Diagnostic | None]:
        """A fast checker for many tools (the planner calls it once per tool per round).

        ``risk_of(tool)`` is the tool's highest action risk; without it ``disabled_risks`` blocks every
        tool the user did not switch back on (fail closed)."""
        patterns = profiles.get(self.profile)
        base = _compile(
            self.profile,
            tuple(patterns) if patterns is not None else None,
            tuple(sorted(profiles)),
            tuple(self.allow),
            tuple(self.deny),
            frozenset(self.disabled),
        )
        if not self.disabled_risks:
            return base
        risks = frozenset(self.disabled_risks)
        switched_on = frozenset(self.enabled)

        def check(tool: str) -> Diagnostic | None:
            blocked = base(tool)
            if blocked is not None or tool in switched_on:
                return blocked
            if risk_of is None or risk_of(tool) in risks:
                return _locked()
            return None

        return check

    def with_switch(self, tool: str, enabled: bool) -> Policy:
        disabled = [t for t in self.disabled if t != tool]
        switched_on = [t for t in self.enabled if t != tool]
        if not enabled:
            disabled.append(tool)
        elif self.disabled_risks:
            switched_on.append(tool)
        return self.model_copy(update={"disabled": sorted(disabled), "enabled": sorted(switched_on)})


@functools.cache
def _locked() -> Diagnostic:
    return Diagnostic.of(Code.DISABLED_SETTINGS_UNREADABLE, "locked", "locked")


@functools.lru_cache(maxsize=64)
def _compile(
    profile: str,
    patterns: tuple[str, ...] | None,
    profile_names: tuple[str, ...],
    allow: tuple[str, ...],
    deny: tuple[str, ...],
    disabled: frozenset[str],
) -> Callable[[str], Diagnostic | None]:
    off = Diagnostic.of(Code.DISABLED_BY_USER, "off", "off")
    denied = Diagnostic.of(Code.DISABLED_BY_POLICY, "denied", "denied")
    if patterns is None:
        no_profile = (
            Diagnostic.of(
                Code.DISABLED_BY_POLICY, "no_profile", "no_profile", profile=profile, profiles=", ".join(profile_names)
            )
            if profile_names
            else Diagnostic.of(Code.DISABLED_BY_POLICY, "no_profile", "no_profiles", profile=profile)
        )
    outside = Diagnostic.of(Code.DISABLED_BY_POLICY, "outside_profile", "outside_profile", profile=profile)
    is_denied = _matcher(deny)
    is_allowed = _matcher((*(patterns or ()), *allow))

    def check(tool: str) -> Diagnostic | None:
        if tool in disabled:
            return off
        if is_denied(tool):
            return denied
        if patterns is None:
            return no_profile
        return None if is_allowed(tool) else outside

    return check
