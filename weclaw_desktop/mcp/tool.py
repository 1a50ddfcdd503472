"""One MCP server as one dynamic tool ``mcp_<server>``: its actions are the server's tools.

Risk (and so approval) follows trust: the tools of a server the user has not marked trusted are
``high`` risk, which the default approval rules ask about at the desktop and deny for schedules; a
trusted server's tools are ``low`` when the server marks them read-only and ``medium`` otherwise (no
prompt at the desktop, a prompt when the request comes from the phone). ``ApprovalPolicy.tool_rules``
can still override a whole server (``mcp_<server>``) or one function.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from weclaw_desktop.mcp.connection import CallTimeoutError, McpConnection, ServerState, ServerUnavailableError
from weclaw_desktop.mcp.convert import convert_result
from weclaw_desktop.mcp.names import assign_names, tool_name
from weclaw_desktop.mcp.schema import McpParams, SchemaProblem, params_model
from weclaw_desktop.toolkit.base import ActionDef, BaseTool, Risk, ToolContext, ToolError, ToolResult, ToolStatus
from weclaw_desktop.toolkit.diagnostics import Code, Diagnostic
from weclaw_desktop.toolkit.manifest import ToolSpec
from weclaw_desktop.toolkit.redact import redact

log = logging.getLogger("weclaw.mcp")

#: The one action listed while a server's tools are not known yet (it never started); never offered.
PLACEHOLDER_ACTION = "not_connected"
MAX_DESCRIPTION = 1024


def mcp_safety(trusted: bool, server: str, annotations: dict[str, types.ToolAnnotations | None]) -> dict[str, Any]:
    """The tools.json ``safety`` of a server's tools (#13): results untrusted unless the user marked the
    server trusted; every tool sends data out (egress) unless the server says ``openWorldHint: false``
    (the MCP default is true). The mcp lane maps more annotations (destructiveHint) onto effects here."""
    label = {"en": f"used the MCP server {server}", "zh": f"使用了 MCP 服务器 {server}"}
    actions: dict[str, Any] = {}
    for action, notes in annotations.items():
        open_world = notes is None or notes.open_world_hint is not False
        actions[action] = {"effects": [{"effect": "sends-data-out"}] if open_world else []}
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
        tools = {t.name: t for t in self.connection.tools}
        named, problems = assign_names(self.server, list(tools))
        actions: list[ActionDef] = []
        originals: dict[str, str] = {}
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
            actions.append(
                ActionDef(
                    name=item.action,
                    description=self._describe(server_tool),
                    params=model,
                    risk=self._risk(server_tool),
                )
            )
            originals[item.action] = item.original
        for problem in problems:
            if problem not in self.problems:
                log.warning("%s", problem)
        changed = [a.name for a in actions] != [a.name for a in self._actions]
        self._actions, self._originals, self.problems = actions, originals, problems
        return changed

    def _describe(self, tool: types.Tool) -> str:
        text = " ".join((tool.description or tool.title or tool.name).split())
        if len(text) > MAX_DESCRIPTION:
            text = text[: MAX_DESCRIPTION - 1] + "…"
        read_only = tool.annotations is not None and tool.annotations.read_only_hint is True
        return f"{text} (MCP server '{self.server}'{', read-only' if read_only else ''})"

    def _risk(self, tool: types.Tool) -> Risk:
        if not self.connection.settings.trusted:
            return Risk.HIGH
        read_only = tool.annotations is not None and tool.annotations.read_only_hint is True
        return Risk.LOW if read_only else Risk.MEDIUM

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
                ),
                "config": {
                    "server": self.server,
                    "transport": settings.transport,
                    "trusted": settings.trusted,
                    "keywords": list(settings.keywords),
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
