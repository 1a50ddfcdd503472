"""The tool registry: built from tools.json, imports tool modules lazily, owns the function table.

Function names are ``{tool}_{action}`` and are looked up in an exact table, never parsed by splitting on
``_``: ``remote_file_share_send_file`` resolves to (remote_file_share, send_file) because the table says
so. Bridges are injected after construction (the Qt window owns them) and again whenever one restarts.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import threading
from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar, cast

from pydantic import ValidationError

from weclaw_desktop.toolkit.base import ActionDef, BaseTool, Risk
from weclaw_desktop.toolkit.diagnostics import Diagnostic
from weclaw_desktop.toolkit.manifest import Manifest, ToolSpec, format_validation_error, load_manifest
from weclaw_desktop.toolkit.schema import SchemaProblem

log = logging.getLogger("weclaw.registry")
T = TypeVar("T")

MAX_FUNCTION_NAME = 64


class RegistryError(ValueError):
    """The manifest cannot be turned into a registry (duplicate names, collisions)."""


class ToolLoadError(RuntimeError):
    """A tool's module, class or config is broken. The message says which and how."""

    def __init__(self, tool: str, message: str) -> None:
        super().__init__(f"tool '{tool}': {message}")
        self.tool = tool


@dataclass(frozen=True)
class FunctionRef:
    function: str
    tool: str
    action: str


def function_name(tool: str, action: str) -> str:
    return f"{tool}_{action}"


class ToolRegistry:
    def __init__(
        self,
        manifest: Manifest,
        *,
        config_overrides: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        self.manifest = manifest
        self._specs: dict[str, ToolSpec] = dict(manifest.tools)
        self._config_overrides: dict[str, dict[str, Any]] = {k: dict(v) for k, v in (config_overrides or {}).items()}
        self._functions: dict[str, FunctionRef] = {}
        self._by_tool: dict[str, list[str]] = {}
        self._tools: dict[str, BaseTool] = {}
        self._dynamic: set[str] = set()
        self._bridges: dict[str, Any] = {}
        self._defs_cache: dict[str, list[dict[str, Any]]] = {}
        self._schema_problems: dict[str, str] = {}  # function -> why its parameters cannot be sent
        self._listeners: list[Callable[[], None]] = []
        self._load_lock = threading.Lock()
        self._findable: dict[str, bool] = {}
        self._checkers: dict[str, Any] = {}
        self._configs: dict[str, Mapping[str, Any]] = {}
        for name, spec in self._specs.items():
            if spec.enabled:
                self._add_functions(name, spec.actions)

    @classmethod
    def from_path(cls, path: str | Path | None = None, **kwargs: Any) -> ToolRegistry:
        from weclaw_desktop.paths import tools_json_path

        return cls(load_manifest(path or tools_json_path()), **kwargs)

    # --- names ----------------------------------------------------------------------------------
    def _add_functions(self, tool: str, actions: Iterable[str]) -> None:
        names = []
        for action_name in actions:
            fn = function_name(tool, action_name)
            existing = self._functions.get(fn)
            if existing is not None:
                raise RegistryError(
                    f"function name '{fn}' is produced twice: by {existing.tool}.{existing.action} "
                    f"and by {tool}.{action_name}; rename one of the tools or actions"
                )
            names.append(fn)
        for fn, action_name in zip(names, actions, strict=True):
            self._functions[fn] = FunctionRef(fn, tool, action_name)
        self._by_tool[tool] = names

    def tool_names(self, *, include_disabled: bool = False) -> list[str]:
        return [n for n, s in self._specs.items() if include_disabled or s.enabled]

    def spec(self, tool: str) -> ToolSpec:
        try:
            return self._specs[tool]
        except KeyError:
            raise KeyError(f"no tool named '{tool}'") from None

    def has_tool(self, tool: str) -> bool:
        return tool in self._specs and self._specs[tool].enabled

    def resolve(self, function: str) -> FunctionRef | None:
        return self._functions.get(function)

    def has_functions(self, tool: str) -> bool:
        return bool(self._by_tool.get(tool))

    def functions_of(self, tool: str) -> list[str]:
        return list(self._by_tool.get(tool, []))

    def all_functions(self) -> list[str]:
        return list(self._functions)

    def risk_of(self, tool: str, action_name: str) -> Risk:
        """The stricter of tools.json's risk and the action's own declaration."""
        declared = self.spec(tool).risk_of(action_name)
        if tool in self._tools:
            for a in self._tools[tool].get_actions():
                if a.name == action_name and a.risk is not None and a.risk.rank > declared.rank:
                    return a.risk
        return declared

    def prepared(self, tool: str, build: Callable[[ToolRegistry, str], T]) -> T:
        """What the planner prepared for ``tool`` (compiled availability etc.), cached until the tool changes."""
        found = self._checkers.get(tool)
        if found is None:
            found = self._checkers[tool] = build(self, tool)
        return cast(T, found)

    # --- config ---------------------------------------------------------------------------------
    def effective_config(self, tool: str) -> dict[str, Any]:
        """tools.json's config with the user's overrides on top (a fresh dict)."""
        return dict(self.config_view(tool))

    def config_view(self, tool: str) -> Mapping[str, Any]:
        """A cached read-only view of :meth:`effective_config` (availability checks run every round)."""
        found = self._configs.get(tool)
        if found is None:
            found = self._configs[tool] = MappingProxyType(
                {**self.spec(tool).config, **self._config_overrides.get(tool, {})}
            )
        return found

    def set_config_overrides(self, tool: str, values: Mapping[str, Any]) -> None:
        """Apply user settings to a tool; a loaded tool is rebuilt on next use."""
        self._config_overrides[tool] = dict(values)
        self._configs.pop(tool, None)
        if tool in self._tools and tool not in self._dynamic:
            del self._tools[tool]
            self._defs_cache.pop(tool, None)
        self._notify()

    # --- loading --------------------------------------------------------------------------------
    def module_findable(self, tool: str) -> bool:
        """Whether the tool's module exists, without importing it (cached: planning runs often)."""
        if tool in self._dynamic or tool in self._tools:
            return True
        module = self.spec(tool).module
        found = self._findable.get(module)
        if found is None:
            try:
                found = importlib.util.find_spec(module) is not None
            except (ImportError, ValueError):
                found = False
            self._findable[module] = found
        return found

    def load_class(self, tool: str) -> type[BaseTool]:
        spec = self.spec(tool)
        try:
            module = importlib.import_module(spec.module)
        except ModuleNotFoundError as exc:
            raise ToolLoadError(tool, f"module '{spec.module}' cannot be imported: {exc}") from exc
        except Exception as exc:
            raise ToolLoadError(tool, f"importing '{spec.module}' failed: {type(exc).__name__}: {exc}") from exc
        cls = getattr(module, spec.class_name, None)
        if cls is None:
            raise ToolLoadError(tool, f"module '{spec.module}' has no class '{spec.class_name}'")
        if not (isinstance(cls, type) and issubclass(cls, BaseTool)):
            raise ToolLoadError(tool, f"'{spec.module}.{spec.class_name}' is not a BaseTool subclass")
        return cls

    def build_config(self, tool: str, cls: type[BaseTool]) -> Any:
        try:
            return cls.Config.model_validate(self.effective_config(tool))
        except ValidationError as exc:
            problems = "; ".join(format_validation_error(exc))
            raise ToolLoadError(tool, f"invalid config: {problems}") from None

    def get(self, tool: str) -> BaseTool:
        """The tool instance, importing and constructing it on first use."""
        existing = self._tools.get(tool)
        if existing is not None:
            return existing
        if not self.has_tool(tool):
            raise ToolLoadError(tool, "no such enabled tool")
        with self._load_lock:
            existing = self._tools.get(tool)
            if existing is not None:
                return existing
            cls = self.load_class(tool)
            config = self.build_config(tool, cls)
            instance = cls(config, name=tool)
            declared = {a.name for a in instance.get_actions()}
            listed = set(self.spec(tool).actions)
            if declared != listed:
                raise ToolLoadError(tool, _action_mismatch(listed, declared))
            instance.set_bridges(self._bridges_for(tool))
            self._tools[tool] = instance
            log.debug("loaded tool %s from %s", tool, self.spec(tool).module)
            return instance

    def is_loaded(self, tool: str) -> bool:
        return tool in self._tools

    def action_def(self, tool: str, action_name: str) -> ActionDef:
        for a in self.get(tool).get_actions():
            if a.name == action_name:
                return a
        raise ToolLoadError(tool, f"has no action '{action_name}'")

    def function_defs(self, tools: Iterable[str], *, exclude: Container[str] = ()) -> list[dict[str, Any]]:
        """OpenAI tool definitions for every action of ``tools``, in tools.json order.

        ``exclude`` drops single functions (actions the planner hid, e.g. a missing optional dependency).
        """
        out: list[dict[str, Any]] = []
        for tool in tools:
            cached = self._defs_cache.get(tool)
            if cached is None:
                instance = self.get(tool)
                by_name = {a.name: a for a in instance.get_actions()}
                cached = []
                for fn in self._by_tool.get(tool, []):
                    a = by_name[self._functions[fn].action]
                    try:
                        parameters = a.parameters_schema()
                    except SchemaProblem as exc:  # hidden alone (schema_problem), never sent
                        self._schema_problems[fn] = str(exc)
                        log.error("function %s is not offered: its parameters schema is %s", fn, exc)
                        continue
                    self._schema_problems.pop(fn, None)
                    cached.append(
                        {
                            "type": "function",
                            "function": {"name": fn, "description": a.description, "parameters": parameters},
                        }
                    )
                self._defs_cache[tool] = cached
            out.extend(d for d in cached if d["function"]["name"] not in exclude)
        return out

    def schema_problem(self, function: str) -> str | None:
        """Why ``function``'s parameters cannot be sent to a model (found when its definition was built)."""
        return self._schema_problems.get(function)

    # --- dynamic tools (MCP servers, plugins) ---------------------------------------------------
    def register_dynamic(self, tool: str, spec: ToolSpec, instance: BaseTool) -> None:
        """Add or replace a tool that is not in tools.json. Function collisions are refused."""
        if tool in self._specs and tool not in self._dynamic:
            raise RegistryError(f"tool name '{tool}' is already declared in tools.json")
        self.unregister_dynamic(tool, notify=False)
        actions = [a.name for a in instance.get_actions()]
        spec = spec.model_copy(update={"actions": actions or spec.actions})
        self._add_functions(tool, spec.actions)
        self._specs[tool] = spec
        self._checkers.pop(tool, None)
        self._configs.pop(tool, None)
        self._dynamic.add(tool)
        instance.name = tool
        instance.set_bridges(self._bridges_for(tool))
        self._tools[tool] = instance
        self._notify()

    def unregister_dynamic(self, tool: str, *, notify: bool = True) -> None:
        if tool not in self._dynamic:
            return
        for fn in self._by_tool.pop(tool, []):
            self._functions.pop(fn, None)
            self._schema_problems.pop(fn, None)
        self._specs.pop(tool, None)
        self._checkers.pop(tool, None)
        self._configs.pop(tool, None)
        self._tools.pop(tool, None)
        self._defs_cache.pop(tool, None)
        self._dynamic.discard(tool)
        if notify:
            self._notify()

    def is_dynamic(self, tool: str) -> bool:
        return tool in self._dynamic

    def live_diagnostics(self, tool: str) -> list[Diagnostic]:
        """A dynamic tool's own reasons it cannot run now (e.g. its MCP server is down)."""
        instance = self._tools.get(tool) if tool in self._dynamic else None
        return instance.live_diagnostics() if instance is not None else []

    def notify_changed(self) -> None:
        """Tell listeners (the tool panel) that a tool's state changed without re-registering it."""
        self._notify()

    # --- bridges --------------------------------------------------------------------------------
    def inject(self, bridges: Mapping[str, Any]) -> None:
        """Set (or with ``None`` remove) bridge services; loaded tools get them at once."""
        for key, value in bridges.items():
            if value is None:
                self._bridges.pop(key, None)
            else:
                self._bridges[key] = value
        for name, instance in self._tools.items():
            wanted = {k: v for k, v in bridges.items() if k in self._specs[name].bridges}
            if wanted:
                instance.set_bridges(wanted)
        log.info("bridges now: %s", ", ".join(sorted(self._bridges)) or "none")
        self._notify()

    def bridge_names(self) -> set[str]:
        return set(self._bridges)

    def bridge(self, key: str) -> Any | None:
        return self._bridges.get(key)

    def _bridges_for(self, tool: str) -> dict[str, Any]:
        return {k: v for k, v in self._bridges.items() if k in self._specs[tool].bridges}

    # --- change notification (the tool panel listens) -------------------------------------------
    def add_listener(self, callback: Callable[[], None]) -> Callable[[], None]:
        self._listeners.append(callback)
        return lambda: self._listeners.remove(callback) if callback in self._listeners else None

    def _notify(self) -> None:
        for callback in list(self._listeners):
            try:
                callback()
            except Exception:  # a listener must not break injection
                log.exception("registry listener failed")


def _action_mismatch(listed: set[str], declared: set[str]) -> str:
    parts = []
    if listed - declared:
        parts.append(f"tools.json lists actions the class lacks: {', '.join(sorted(listed - declared))}")
    if declared - listed:
        parts.append(f"the class defines actions tools.json lacks: {', '.join(sorted(declared - listed))}")
    return "; ".join(parts)
