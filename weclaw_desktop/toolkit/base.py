"""The tool contract: BaseTool, ActionDef, ToolResult, ToolContext (DESIGN.md section 3).

A tool is a class with one async method per action, each marked with :func:`action`::

    class EchoParams(BaseModel):
        text: str = Field(description="What to say back")

    class EchoTool(BaseTool):
        @action("Repeat the text back. Use it to test the tool system.")
        async def say(self, params: EchoParams, ctx: ToolContext) -> ToolResult:
            return ToolResult.ok(params.text)

The parameters of an action are a pydantic model; its JSON Schema becomes the OpenAI function's
``parameters``. A tool's own settings are its ``Config`` model, validated from the ``config`` of its
tools.json entry and passed to the constructor.
"""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar, TypeVar, get_type_hints

from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.storage.db import Database
from weclaw_desktop.toolkit.diagnostics import Diagnostic
from weclaw_desktop.toolkit.schema import openai_parameters


class Risk(StrEnum):
    """How much harm a wrong call could do. Approval policy is keyed on it."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"

    @property
    def rank(self) -> int:
        return {"low": 0, "medium": 1, "high": 2}[self.value]


class ToolStatus(StrEnum):
    SUCCESS = "success"
    ERROR = "error"
    TIMEOUT = "timeout"
    DENIED = "denied"
    CANCELLED = "cancelled"


class Origin(StrEnum):
    """Where a request came from. A request from the phone or a schedule is treated more strictly."""

    GUI = "gui"
    CLI = "cli"
    COMPANION = "companion"
    SCHEDULE = "schedule"


class ToolResult(BaseModel):
    """What a tool call produced: text for the model, small structured data, and files."""

    model_config = ConfigDict(extra="forbid")

    status: ToolStatus = ToolStatus.SUCCESS
    output: str = ""
    data: Any = None
    files: list[str] = Field(default_factory=list)
    # Of ``files``, the images a vision-capable model may be shown as image parts (an MCP server's
    # screenshot): the text the model reads only names them; the request builder attaches them.
    images: list[str] = Field(default_factory=list)
    error: str | None = None
    duration_ms: float = 0.0
    truncated: bool = False

    @classmethod
    def ok(
        cls,
        output: str,
        *,
        data: Any = None,
        files: list[str] | list[Path] | None = None,
        images: list[str] | list[Path] | None = None,
    ) -> ToolResult:
        return cls(output=output, data=data, files=[str(f) for f in files or []], images=[str(f) for f in images or []])

    @classmethod
    def fail(cls, message: str, *, status: ToolStatus = ToolStatus.ERROR, data: Any = None) -> ToolResult:
        return cls(status=status, output=message, error=message, data=data)

    @property
    def succeeded(self) -> bool:
        return self.status is ToolStatus.SUCCESS

    def for_model(self) -> str:
        """The text the model reads: the output, then the data as JSON, then the files."""
        parts = [self.output] if self.output else []
        if self.data not in (None, {}, []):
            parts.append("data: " + json.dumps(self.data, ensure_ascii=False, default=str))
        if self.files:
            parts.append("files: " + ", ".join(self.files))
        if self.status is not ToolStatus.SUCCESS and not parts:
            parts.append(f"{self.status.value}: {self.error or 'no details'}")
        return "\n".join(parts)


ProgressCallback = Callable[[float | None, str], None]


def _no_progress(fraction: float | None, message: str) -> None:
    return None


@dataclass(kw_only=True)
class ToolContext:
    """Everything a call knows about where it runs. Built for each call from the :class:`ToolEnv` that the
    composition root (the runtime, the CLI, a test) made: the folders and the database are never guessed."""

    outputs_dir: Path  # where tools put the files they create
    data_dir: Path  # the app's data folder
    db: Database | None  # the shared weclaw.db; None: this caller has none (tools that need it refuse)
    allowed_roots: list[Path] = field(default_factory=list)  # folders tools may touch; [] = the home folder
    session_id: str = "local"
    run_id: str = "run"
    call_id: str = "call"
    origin: Origin = Origin.CLI
    progress_callback: ProgressCallback = _no_progress
    trace_id: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    _last_progress: float = field(default=0.0, repr=False)

    def progress(self, fraction: float | None, message: str = "", *, force: bool = False) -> None:
        """Report progress (0..1, or None when unknown). Throttled to ~10 reports a second."""
        now = time.monotonic()
        if not force and fraction not in (0.0, 1.0) and now - self._last_progress < 0.1:
            return
        self._last_progress = now
        self.progress_callback(fraction, message)


@dataclass(frozen=True)
class ToolEnv:
    """Where tools work, decided once by the composition root and copied into every :class:`ToolContext`."""

    outputs_dir: Path
    data_dir: Path
    db: Database | None
    allowed_roots: tuple[Path, ...] = ()

    def context(self, **fields: Any) -> ToolContext:
        """A context for one call: these folders and database, plus ``fields`` (session_id, origin, ...)."""
        return ToolContext(
            outputs_dir=self.outputs_dir,
            data_dir=self.data_dir,
            db=self.db,
            allowed_roots=list(self.allowed_roots),
            **fields,
        )


ParamsT = TypeVar("ParamsT", bound=BaseModel)


class NoParams(BaseModel):
    """An action that takes no arguments."""

    model_config = ConfigDict(extra="forbid")


class EmptyConfig(BaseModel):
    """The Config of a tool that has no settings."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class ActionDef:
    """One action of a tool: one function for the model, named ``{tool}_{action}``."""

    name: str
    description: str
    params: type[BaseModel]
    risk: Risk | None = None
    handler: str = ""

    def parameters_schema(self) -> dict[str, Any]:
        """The OpenAI function ``parameters``: closed objects, refs inlined, no titles."""
        return openai_parameters(self.params)


@dataclass(frozen=True)
class _ActionMarker:
    description: str
    risk: Risk | None
    name: str | None


def action(
    description: str, *, risk: Risk | str | None = None, name: str | None = None
) -> Callable[[Callable[..., Awaitable[ToolResult]]], Callable[..., Awaitable[ToolResult]]]:
    """Mark an async method ``(self, params: Model, ctx: ToolContext) -> ToolResult`` as an action.

    The description is what the model reads: say what it does and when to use it.
    """

    def mark(fn: Callable[..., Awaitable[ToolResult]]) -> Callable[..., Awaitable[ToolResult]]:
        if not inspect.iscoroutinefunction(fn):
            raise TypeError(f"action {fn.__qualname__} must be an async method")
        fn.__weclaw_action__ = _ActionMarker(  # type: ignore[attr-defined]
            description=" ".join(description.split()),
            risk=Risk(risk) if risk is not None else None,
            name=name,
        )
        return fn

    return mark


class BaseTool:
    """Base class of every tool. Subclasses define actions with :func:`action`.

    ``Config`` is the tool's settings model; ``name`` is set by the registry from tools.json, so the same
    class can serve under another name. Bridges (Qt services, the phone link) are injected after
    construction: use :meth:`bridge` inside actions, never in ``__init__``.
    """

    Config: ClassVar[type[BaseModel]] = EmptyConfig

    def __init__(self, config: BaseModel | None = None, *, name: str | None = None) -> None:
        self.config: Any = config if config is not None else type(self).Config()
        self.name: str = name or type(self).__name__
        self._bridges: dict[str, Any] = {}

    # --- actions -------------------------------------------------------------------------------
    @classmethod
    def action_defs(cls) -> list[ActionDef]:
        """The actions this class defines, in definition order (computed once per class)."""
        cached = cls.__dict__.get("_weclaw_action_defs")
        if cached is None:
            cached = cls._collect_action_defs()
            cls._weclaw_action_defs = cached  # type: ignore[attr-defined]
        return list(cached)

    @classmethod
    def _collect_action_defs(cls) -> list[ActionDef]:
        found: list[ActionDef] = []
        seen: set[str] = set()
        for klass in reversed(cls.__mro__):
            for attr, fn in vars(klass).items():
                marker = getattr(fn, "__weclaw_action__", None)
                if not isinstance(marker, _ActionMarker):
                    continue
                action_name = marker.name or attr
                if action_name in seen:
                    found = [a for a in found if a.name != action_name]
                seen.add(action_name)
                found.append(
                    ActionDef(
                        name=action_name,
                        description=marker.description,
                        params=_params_model(fn),
                        risk=marker.risk,
                        handler=attr,
                    )
                )
        return found

    def get_actions(self) -> list[ActionDef]:
        """The actions of this instance. Dynamic tools (MCP) override this."""
        return type(self).action_defs()

    def live_diagnostics(self) -> list[Diagnostic]:
        """Why a dynamic tool cannot run right now (an MCP server that is down); [] when it can.

        The planner asks registered dynamic tools only, so built-in tools are never imported for this.
        """
        return []

    async def execute(self, action_name: str, params: BaseModel, ctx: ToolContext) -> ToolResult:
        """Run one action with already-validated parameters."""
        for spec in self.get_actions():
            if spec.name == action_name:
                handler: Callable[[BaseModel, ToolContext], Awaitable[ToolResult]] = getattr(self, spec.handler)
                return await handler(params, ctx)
        raise KeyError(f"{self.name} has no action {action_name!r}")

    # --- bridges -------------------------------------------------------------------------------
    def set_bridges(self, bridges: Mapping[str, Any]) -> None:
        """Called by the registry; ``None`` removes a bridge (it stopped)."""
        for key, value in bridges.items():
            if value is None:
                self._bridges.pop(key, None)
            else:
                self._bridges[key] = value

    def has_bridge(self, key: str) -> bool:
        return key in self._bridges

    def bridge(self, key: str) -> Any:
        """The injected bridge service, or :class:`BridgeMissingError` with a clear message."""
        try:
            return self._bridges[key]
        except KeyError:
            raise BridgeMissingError(key, self.name) from None


class BridgeMissingError(RuntimeError):
    def __init__(self, bridge: str, tool: str) -> None:
        super().__init__(
            f"The {bridge} service is not connected, so {tool} cannot run now. "
            "It is available in the desktop app once that service has started."
        )
        self.bridge = bridge


class ToolError(Exception):
    """Raise from an action for an expected failure; its message goes to the model as is."""


def _params_model(fn: Callable[..., Any]) -> type[BaseModel]:
    try:
        hints = get_type_hints(fn)
    except Exception as exc:  # a forward reference the module cannot resolve
        raise TypeError(f"cannot read the parameter model of {fn.__qualname__}: {exc}") from exc
    names = [p for p in inspect.signature(fn).parameters if p != "self"]
    if len(names) != 2:
        raise TypeError(f"action {fn.__qualname__} must take (self, params, ctx)")
    model = hints.get(names[0])
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise TypeError(f"action {fn.__qualname__}: its params must be annotated with a pydantic model")
    return model
