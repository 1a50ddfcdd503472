"""Availability expressions: when may a tool be offered on this machine, right now?

An expression in tools.json is one signal or a combination::

    {"bridge": "companion"}            a bridge service has been injected
    {"config": "host"}                 the tool's effective config has a non-empty ``host``
    {"secret": "email.password"}       the keyring (or this session) holds that secret
    {"env": "GITHUB_TOKEN"}            an environment variable is set
    {"module": "docx"}                 an optional dependency is importable
    {"platform": ["linux", "darwin"]}  sys.platform starts with one of these
    {"allOf": [...]}  {"anyOf": [...]}  {"not": {...}}

Evaluating one gives the diagnostics of what is missing (empty when the tool is available).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, Field, RootModel, model_validator

from weclaw_desktop import i18n
from weclaw_desktop.toolkit.diagnostics import Code, Diagnostic


class _Signal(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class BridgeReq(_Signal):
    bridge: str


class ConfigReq(_Signal):
    config: str


class SecretReq(_Signal):
    secret: str


class EnvReq(_Signal):
    env: str


class ModuleReq(_Signal):
    module: str
    package: str | None = Field(default=None, description="pip package that provides the module")


class PlatformReq(_Signal):
    platform: list[str] = Field(description="sys.platform prefixes: linux, darwin, win32")

    @model_validator(mode="before")
    @classmethod
    def _one_or_many(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("platform"), str):
            return {**data, "platform": [data["platform"]]}
        return data


class AllOf(_Signal):
    all_of: list[Requirement] = Field(alias="allOf")


class AnyOf(_Signal):
    any_of: list[Requirement] = Field(alias="anyOf")


class Not(_Signal):
    not_: Requirement = Field(alias="not")


Requirement = Union[  # noqa: UP007 - a recursive alias needs Union for pydantic
    BridgeReq, ConfigReq, SecretReq, EnvReq, ModuleReq, PlatformReq, AllOf, AnyOf, Not
]
for _model in (AllOf, AnyOf, Not):
    _model.model_rebuild()


class RequirementModel(RootModel[Requirement]):
    pass


@functools.cache
def module_importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


@dataclass
class AvailabilityContext:
    """What the machine and app have right now. The CLI and GUI fill it; tests build their own."""

    bridges: set[str] = field(default_factory=set)
    tool_config: Callable[[str], Mapping[str, Any]] = lambda tool: {}
    has_secret: Callable[[str], bool] = lambda name: False
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    platform: str = sys.platform
    module_available: Callable[[str], bool] = field(default=lambda name: module_importable(name))


Checker = Callable[[AvailabilityContext], list[Diagnostic]]


def _ok(ctx: AvailabilityContext) -> list[Diagnostic]:
    return []


def evaluate(req: Requirement | None, tool: str, ctx: AvailabilityContext) -> list[Diagnostic]:
    """Diagnostics of everything ``req`` lacks for ``tool``; empty means available."""
    return compile_requirement(req, tool)(ctx)


def compile_requirement(req: Requirement | None, tool: str) -> Checker:
    """Turn an expression into a function of the context. The registry caches one per tool, so
    planning a request walks prepared closures with prebuilt diagnostics (``bench/registry.py``)."""
    if req is None:
        return _ok
    if isinstance(req, AllOf):
        parts = [compile_requirement(sub, tool) for sub in req.all_of]
        return lambda ctx: [d for part in parts for d in part(ctx)]
    if isinstance(req, AnyOf):
        options = [compile_requirement(sub, tool) for sub in req.any_of]

        def any_of(ctx: AvailabilityContext) -> list[Diagnostic]:
            missing: list[Diagnostic] = []
            for option in options:
                found = option(ctx)
                if not found:
                    return []
                missing.extend(found)
            return missing

        return any_of
    if isinstance(req, Not):
        inner = compile_requirement(req.not_, tool)
        negated = [_negated(req.not_)]
        return lambda ctx: [] if inner(ctx) else negated
    return _compile_signal(req, tool)


def _compile_signal(req: Requirement, tool: str) -> Checker:
    if isinstance(req, BridgeReq):
        name = req.bridge
        text = f"bridge.{name}" if i18n.has(f"diag.text.bridge.{name}") else "bridge"  # named for people
        missing = [Diagnostic.of(Code.BRIDGE_MISSING, text, _BRIDGE_HINTS.get(name, "bridge"), name=name)]
        return lambda ctx: [] if name in ctx.bridges else missing
    if isinstance(req, ConfigReq):
        key = req.config
        missing = [Diagnostic.of(Code.CONFIG_MISSING, "config", "config", key=key, tool=tool)]
        return lambda ctx: [] if ctx.tool_config(tool).get(key) not in (None, "", [], {}) else missing
    if isinstance(req, SecretReq):
        secret = req.secret
        missing = [Diagnostic.of(Code.AUTH_MISSING, "secret", "secret", secret=secret)]
        return lambda ctx: [] if ctx.has_secret(secret) else missing
    if isinstance(req, EnvReq):
        env = req.env
        missing = [Diagnostic.of(Code.ENV_MISSING, "env", "env", env=env)]
        return lambda ctx: [] if ctx.environ.get(env) else missing
    if isinstance(req, ModuleReq):
        module = req.module
        missing = [
            Diagnostic.of(Code.DEPENDENCY_MISSING, "module", "module", module=module, package=req.package or module)
        ]
        return lambda ctx: [] if ctx.module_available(module) else missing
    if isinstance(req, PlatformReq):
        prefixes = tuple(req.platform)

        def platform(ctx: AvailabilityContext) -> list[Diagnostic]:
            if ctx.platform.startswith(prefixes):
                return []
            return [
                Diagnostic.of(
                    Code.PLATFORM_UNSUPPORTED, "platform", platforms=", ".join(prefixes), platform=ctx.platform
                )
            ]

        return platform
    raise TypeError(f"unknown requirement {req!r}")  # pragma: no cover


def _negated(req: Requirement) -> Diagnostic:
    if isinstance(req, PlatformReq):
        return Diagnostic.of(Code.PLATFORM_UNSUPPORTED, "not.platform", platforms=", ".join(req.platform))
    if isinstance(req, ModuleReq):
        return Diagnostic.of(Code.DEPENDENCY_MISSING, "not.module", module=req.module)
    if isinstance(req, EnvReq):
        return Diagnostic.of(Code.ENV_MISSING, "not.env", env=req.env)
    if isinstance(req, BridgeReq):
        return Diagnostic.of(Code.BRIDGE_MISSING, "not.bridge", name=req.bridge)
    if isinstance(req, SecretReq):
        return Diagnostic.of(Code.AUTH_MISSING, "not.secret", secret=req.secret)
    if isinstance(req, ConfigReq):
        return Diagnostic.of(Code.CONFIG_MISSING, "not.config", key=req.config)
    return Diagnostic.of(Code.PLATFORM_UNSUPPORTED, "not.other")


#: bridge -> the catalogue's hint (``diag.hint.<key>``) on how to get it running.
_BRIDGE_HINTS = {
    "companion": "bridge.companion",
    "clipboard": "bridge.desktop_app",
    "notifier": "bridge.desktop_app",
    "screen": "bridge.desktop_app",
    "desktop": "bridge.desktop_app",
    "history": "bridge.history",
}
