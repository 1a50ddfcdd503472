"""Which tools the user and the administrator allow: profiles, allow and deny lists, per-tool switches.

Precedence, strongest first: the user's per-tool switch (off), the deny list, then the active profile
together with the allow list. Deny always wins over allow.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Callable, Iterable, Mapping

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

    def check(self, tool: str, profiles: Mapping[str, list[str]]) -> Diagnostic | None:
        """None when ``tool`` is allowed, else why not."""
        return self.compiled(profiles)(tool)

    def compiled(self, profiles: Mapping[str, list[str]]) -> Callable[[str], Diagnostic | None]:
        """A fast checker for many tools (the planner calls it once per tool per round)."""
        patterns = profiles.get(self.profile)
        return _compile(
            self.profile,
            tuple(patterns) if patterns is not None else None,
            tuple(sorted(profiles)),
            tuple(self.allow),
            tuple(self.deny),
            frozenset(self.disabled),
        )

    def with_switch(self, tool: str, enabled: bool) -> Policy:
        disabled = [t for t in self.disabled if t != tool]
        if not enabled:
            disabled.append(tool)
        return self.model_copy(update={"disabled": sorted(disabled)})


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
