"""One MCP server as one dynamic tool ``mcp_<server>``: its actions are the server's tools.

Risk (and so approval) follows trust and the tool's annotations (``annotations.py``, a data table): the
tools of a server the user has not marked trusted are ``high`` risk, which the default approval rules ask
about at the desktop and deny for schedules; on a trusted server ``destructiveHint`` is ``high`` (it
asks even there), ``readOnlyHint`` ``low`` and anything else ``medium`` (no prompt at the desktop, a
prompt when the request comes from the phone). The server's per-tool approval mode (``tool_approval``:
ask / allow / deny) overrides that; ``deny`` leaves the tool out. ``ApprovalPolicy.tool_rules`` can
still override a whole server (``mcp_<server>``) or one function.

A tool that requires MCP tasks (``execution.taskSupport: required``) is left out with that reason: the
SDK parses task types but does not run task-augmented calls, so every call would fail.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from weclaw_desktop.mcp.annotations import meaning
from weclaw_desktop.mcp.connection import CallTimeoutError, McpConnection, ServerState, ServerUnavailableError
from weclaw_desktop.mcp.convert import convert_result
from weclaw_desktop.mcp.names import assign_names, tool_name
from weclaw_desktop.mcp.resources import (
    RESOURCE_ACTION,
    RESOURCE_ACTION_FALLBACK,
    ReadResourceParams,
    describe,
    read_for_model,
)
from weclaw_desktop.mcp.schema import McpParams, SchemaProblem, params_model
from weclaw_desktop.toolkit.base import ActionDef, BaseTool, Risk, ToolContext, ToolError, ToolResult, ToolStatus
from weclaw_desktop.toolkit.diagnostics import Code, Diagnostic
from weclaw_desktop.toolkit.manifest import ToolSpec
from weclaw_desktop.toolkit.redact import redact

log = logging.getLogger("weclaw.mcp")


@dataclass(frozen=True)
class ServerToolInfo:
    """One tool a server lists: its own name, our function ('' when not offered), risk and approval mode."""

    name: str
    function: str
    description: str
    risk: str
    mode: str  # '' = automatic (annotations and trust), or ask / allow / deny


#: The one action listed while a server's tools are not known yet (it never started); never offered.
PLACEHOLDER_ACTION = "not_connected"
MAX_DESCRIPTION = 1024


def mcp_safety(
    trusted: bool,
    server: str,
    annotations: dict[str, types.ToolAnnotations | None],
    declared: dict[str, tuple[str, ...]] | None = None,
) -> dict[str, Any]:
    """The tools.json ``safety`` of a server's tools (#13): results untrusted unless the user marked the
    server trusted; each tool has the effects its annotations give (``annotations.meaning``) and, failing
    closed, sends data out unless the server says ``openWorldHint: false`` (the MCP default is true)."""
    label = {"en": f"used the MCP server {server}", "zh": f"使用了 MCP 服务器 {server}"}
    actions: dict[str, Any] = {}
    for action, notes in annotations.items():
        effects = set((declared or {}).get(action, ()))
        if notes is None or notes.open_world_hint is not False:
            effects.add("sends-data-out")
        actions[action] = {"effects": [{"effect": e} for e in sorted(effects)]}
    return {
        "results": "trusted" if trusted else "untrusted",
        "source": label,
        "effects": [{"effect": "sends-data-out"}],
        "actions": actions,
    }


class McpTool(BaseTool):
    def __init__(self, connection: McpConnection) -> None:
        super().__init__(name=tool_name(connection.name))
        self.connection = connection
        self._actions: list[ActionDef] = []
        self._originals: dict[str, str] = {}
        self.problems: list[str] = []  # server tools that were refused, and why
        self.switched_off: list[str] = []  # server tools the user denied (tool_approval "deny")
        self.effects: dict[str, tuple[str, ...]] = {}  # action -> effects its annotations declare
        self._reader = ""  # the action name of read_resource ('' when the server has no resources)

    @property
    def server(self) -> str:
        return self.connection.name

    @property
    def keywords(self) -> list[str]:
        return list(self.connection.settings.keywords)

    # --- actions --------------------------------------------------------------------------------
    def rebuild(self, owner_of: Callable[[str], str | None] = lambda fn: None) -> bool:
        """Make actions from the server's tool list; True when the action names changed.

        ``owner_of(function)`` names another tool that already has that function name (a collision).
        """
        settings = self.connection.settings
        modes = settings.tool_approval
        tools = {t.name: t for t in self.connection.tools}
        switched_off = [name for name in tools if modes.get(name) == "deny"]
        problems: list[str] = []
        for name, server_tool in list(tools.items()):
            if server_tool.execution is not None and server_tool.execution.task_support == "required":
                problems.append(
                    f"tool '{name}' of MCP server '{self.server}' is skipped: it runs only as an MCP task, "
                    "which WeClaw does not support yet"
                )
                del tools[name]
        named, naming = assign_names(self.server, [n for n in tools if n not in switched_off])
        problems += naming
        actions: list[ActionDef] = []
        originals: dict[str, str] = {}
        effects: dict[str, tuple[str, ...]] = {}
        for item in named:
            owner = owner_of(item.function)
            if owner is not None and owner != self.name:
                problems.append(
                    f"tool '{item.original}' of MCP server '{self.server}' is skipped: the function name "
                    f"'{item.function}' already belongs to '{owner}'. Rename the server in Settings > MCP."
                )
                continue
            server_tool = tools[item.original]
            try:
                model = params_model(f"{self.name}_{item.action}_params", server_tool.input_schema)
            except SchemaProblem as exc:
                problems.append(f"tool '{item.original}' of MCP server '{self.server}' is skipped: {exc}")
                continue
            means = meaning(server_tool, trusted=settings.trusted, mode=modes.get(item.original))
            actions.append(
                ActionDef(
                    name=item.action,
                    description=self._describe(server_tool, means.labels),
                    params=model,
                    risk=means.risk,
                )
            )
            originals[item.action] = item.original
            effects[item.action] = means.effects
        reader = self._resource_action(settings.trusted, {a.name for a in actions})
        if reader is not None:
            actions.append(reader)
        for problem in problems:
            if problem not in self.problems:
                log.warning("%s", problem)
        changed = [a.name for a in actions] != [a.name for a in self._actions]
        self._actions, self._originals, self.problems = actions, originals, problems
        self.switched_off, self.effects = switched_off, effects
        return changed

    def _describe(self, tool: types.Tool, labels: tuple[str, ...]) -> str:
        text = " ".join((tool.description or tool.title or tool.name).split())
        if len(text) > MAX_DESCRIPTION:
            text = text[: MAX_DESCRIPTION - 1] + "…"
        about = "".join(f", {label}" for label in labels)
        return f"{text} (MCP server '{self.server}'{about})"

    def _resource_action(self, trusted: bool, taken: set[str]) -> ActionDef | None:
        """``read_resource`` when the server has resources (never hiding a server tool of that name)."""
        conn = self.connection
        if conn.capabilities is None or conn.capabilities.resources is None:
            self._reader = ""
            return None
        self._reader = RESOURCE_ACTION if RESOURCE_ACTION not in taken else RESOURCE_ACTION_FALLBACK
        read_only = types.Tool(
            name=self._reader, input_schema={}, annotations=types.ToolAnnotations(read_only_hint=True)
        )
        return ActionDef(
            name=self._reader,
            description=describe(self.server, conn.resources, conn.templates),
            params=ReadResourceParams,
            risk=meaning(read_only, trusted=trusted).risk,
        )

    def catalogue(self) -> list[ServerToolInfo]:
        """Every tool the server lists, offered or not (the MCP page's switches and approval modes)."""
        by_original = {o: a for a, o in self._originals.items()}
        actions = {a.name: a for a in self._actions}
        modes = self.connection.settings.tool_approval
        out: list[ServerToolInfo] = []
        for tool in self.connection.tools:
            action = by_original.get(tool.name, "")
            found = actions.get(action)
            out.append(
                ServerToolInfo(
                    name=tool.name,
                    function=f"{self.name}_{action}" if action else "",
                    description=" ".join((tool.description or tool.title or "").split())[:300],
                    risk=found.risk.value if found is not None and found.risk is not None else "",
                    mode=modes.get(tool.name, ""),
                )
            )
        return out

    def original_name(self, action: str) -> str | None:
        """The server's own name of the tool behind ``action``."""
        return self._originals.get(action)

    def get_actions(self) -> list[ActionDef]:
        return list(self._actions)

    def spec(self) -> ToolSpec:
        """The registry entry: description and keywords for routing, risk from trust, the call timeout."""
        settings = self.connection.settings
        info = self.connection.server_info
        about = (self.connection.instructions or "").strip().splitlines()
        summary = about[0][:200] if about else ""
        names = ", ".join(self._originals.values())[:400]
        en = f"Tools of the MCP server '{self.server}'" + (f" ({info.name})" if info and info.name else "")
        en += f": {summary}" if summary else ""
        en += f". Tools: {names}" if names else ""
        zh = f"MCP 服务器“{self.server}”的工具" + (f"：{names}" if names else "")
        action_risk = {a.name: a.risk.value for a in self._actions if a.risk is not None}
        tools = {t.name: t for t in self.connection.tools}
        return ToolSpec.model_validate(
            {
                "module": __name__,
                "class": type(self).__name__,
                "actions": [a.name for a in self._actions] or [PLACEHOLDER_ACTION],
                "description": {"en": en, "zh": zh},
                "display": {"name": {"en": f"MCP: {self.server}", "zh": f"MCP：{self.server}"}, "category": "mcp"},
                "risk": Risk.LOW.value if settings.trusted else Risk.HIGH.value,
                "action_risk": action_risk,
                # The call's own timeout answers first, with a clearer message; this is the backstop.
                "timeout_s": min(settings.timeout_s + 5, 86400),
                "safety": mcp_safety(
                    settings.trusted,
                    self.server,
                    {a: tools[o].annotations for a, o in self._originals.items() if o in tools},
                    self.effects,
                ),
                "config": {
                    "server": self.server,
                    "transport": settings.transport,
                    "trusted": settings.trusted,
                    "keywords": list(settings.keywords),
                    "effects": {a: list(e) for a, e in self.effects.items() if e},
                },
            }
        )

    # --- availability ---------------------------------------------------------------------------
    def live_diagnostics(self) -> list[Diagnostic]:
        conn = self.connection
        hint = "It reconnects by itself; see Settings > MCP to check or change the server."
        if conn.state is ServerState.CONNECTED:
            if self._actions:
                return []
            detail = f": {'; '.join(self.problems)}" if self.problems else ""
            return [Diagnostic(code=Code.SERVER_UNAVAILABLE, message=f"offers no usable tools{detail}")]
        if conn.state is ServerState.DOWN:
            if conn.error_code is not Code.SERVER_UNAVAILABLE:
                return [Diagnostic(code=conn.error_code, message=conn.status_text(), hint="Fix it in Settings > MCP.")]
            return [Diagnostic(code=Code.SERVER_UNAVAILABLE, message=conn.status_text(), hint=hint)]
        return [Diagnostic(code=Code.SERVER_UNAVAILABLE, message=conn.status_text())]

    # --- calls ----------------------------------------------------------------------------------
    async def execute(self, action_name: str, params: BaseModel, ctx: ToolContext) -> ToolResult:
        if action_name == self._reader and isinstance(params, ReadResourceParams):
            try:
                found = await self.connection.read_resource(params.uri)
            except ServerUnavailableError as exc:
                return ToolResult.fail(redact(str(exc)))
            return await read_for_model(found, label=f"{self.server}.resource", outputs_dir=ctx.outputs_dir)
        original = self._originals.get(action_name)
        if original is None:
            raise ToolError(f"MCP server '{self.server}' no longer offers '{action_name}'. Use another tool.")
        arguments: dict[str, Any] = params.arguments() if isinstance(params, McpParams) else params.model_dump()
        label = f"{self.server}.{original}"
        timeout = self.connection.settings.timeout_s

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            ctx.progress(progress / total if total else None, message or "")

        try:
            result = await self.connection.call_tool(original, arguments, read_timeout_s=timeout, progress=progress)
        except ServerUnavailableError as exc:
            return ToolResult.fail(redact(str(exc)))
        except CallTimeoutError:
            return ToolResult.fail(
                f"{label} did not finish within {timeout:g} s and was cancelled. "
                "Try a smaller request or tell the user it takes too long.",
                status=ToolStatus.TIMEOUT,
            )
        except MCPError as exc:
            return ToolResult.fail(f"{label} failed: {redact(exc.message)}")
        return await convert_result(result, label=label, outputs_dir=ctx.outputs_dir)
