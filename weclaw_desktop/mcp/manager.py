"""The MCP manager: the servers of the settings, kept running and registered as dynamic tools.

``apply(servers)`` brings the running set in line with the settings (start new ones, stop removed or
disabled ones, restart changed ones). Each server is one tool ``mcp_<server>`` in the registry from the
moment it starts: hidden with a ``server-unavailable`` diagnostic until it is connected (and whenever it
is down), visible with one action per server tool while it is up. Calls go through the dispatcher
like any other tool's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import mcp_types as types

from weclaw_desktop.i18n import Text
from weclaw_desktop.mcp.connection import Backoff, McpConnection, ServerState
from weclaw_desktop.mcp.interact import ClientHooks
from weclaw_desktop.mcp.names import tool_name
from weclaw_desktop.mcp.tool import McpTool, ServerToolInfo
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import McpServerSettings
from weclaw_desktop.toolkit.registry import RegistryError, ToolRegistry

log = logging.getLogger("weclaw.mcp")


@dataclass
class ServerStatus:
    """What the settings page and ``weclaw tools`` show about one server."""

    name: str
    tool: str
    state: str
    message: str
    tools: list[tuple[str, str]] = field(default_factory=list)  # (function name, description)
    problems: list[str] = field(default_factory=list)
    text: Text | None = None  # ``message`` for people, in the UI language
    catalogue: list[ServerToolInfo] = field(default_factory=list)  # every server tool, offered or not


class McpManager:
    def __init__(
        self,
        registry: ToolRegistry,
        secrets: SecretStore | None = None,
        *,
        backoff: Backoff | None = None,
        health_interval: float = 15.0,
        connect_timeout: float = 60.0,  # a first `npx`/`uvx` run downloads the server before it answers
        log_dir: Path | None = None,
        hooks: ClientHooks | None = None,
    ) -> None:
        self.registry = registry
        self.hooks = hooks or ClientHooks()
        self.secrets = secrets or SecretStore()
        self.backoff = backoff or Backoff()
        self.health_interval = health_interval
        self.connect_timeout = connect_timeout
        self.log_dir = log_dir
        self._tools: dict[str, McpTool] = {}
        self.errors: dict[str, str] = {}  # servers that could not be registered at all

    # --- lifecycle ------------------------------------------------------------------------------
    async def apply(self, servers: Iterable[McpServerSettings]) -> None:
        """Start, stop and restart servers so that exactly the enabled ones in ``servers`` run."""
        wanted = {s.name: s for s in servers if s.enabled}
        for name in [n for n in self._tools if n not in wanted]:
            await self.stop(name)
        for name, settings in wanted.items():
            current = self._tools.get(name)
            if current is not None and current.connection.settings == settings:
                continue
            if current is not None:
                await self.stop(name)
            self.start(settings)

    def start(self, settings: McpServerSettings) -> McpTool | None:
        """Register the server's tool and start connecting (returns at once)."""
        if settings.name in self._tools:
            return self._tools[settings.name]
        conn = McpConnection(
            settings,
            self.secrets,
            backoff=self.backoff,
            health_interval=self.health_interval,
            connect_timeout=self.connect_timeout,
            log_dir=self.log_dir,
            on_change=self._changed,
            hooks=self.hooks,
        )
        tool = McpTool(conn)
        try:
            self.registry.register_dynamic(tool.name, tool.spec(), tool)
        except RegistryError as exc:
            self.errors[settings.name] = f"{exc}; rename the MCP server"
            log.error("MCP server %s not added: %s", settings.name, exc)
            return None
        self.errors.pop(settings.name, None)
        self._tools[settings.name] = tool
        conn.start()
        return tool

    async def stop(self, name: str) -> None:
        tool = self._tools.pop(name, None)
        if tool is None:
            return
        await tool.connection.stop()
        self.registry.unregister_dynamic(tool.name)

    def restart(self, name: str) -> None:
        tool = self._tools.get(name)
        if tool is not None:
            tool.connection.restart()

    async def stop_all(self) -> None:
        await asyncio.gather(*(self.stop(name) for name in list(self._tools)), return_exceptions=True)

    async def wait_settled(self, within: float) -> None:
        """Wait until every server is connected or down (``weclaw tools``, tests, the startup screen)."""
        settled = (ServerState.CONNECTED, ServerState.DOWN, ServerState.STOPPED)
        await asyncio.gather(*(t.connection.wait_for(*settled, within=within) for t in self._tools.values()))

    # --- state ----------------------------------------------------------------------------------
    def tool(self, name: str) -> McpTool | None:
        return self._tools.get(name)

    def servers(self) -> list[str]:
        return list(self._tools)

    def status(self, name: str) -> ServerStatus:
        tool = self._tools.get(name)
        if tool is None:
            message = self.errors.get(name, "not running")
            return ServerStatus(name=name, tool=tool_name(name), state="stopped", message=message)
        conn = tool.connection
        return ServerStatus(
            name=name,
            tool=tool.name,
            state=conn.state.value,
            message=conn.status_text(),
            text=conn.status_message(),
            tools=[(f"{tool.name}_{a.name}", a.description) for a in tool.get_actions()],
            problems=list(tool.problems),
            catalogue=tool.catalogue(),
        )

    # --- resources and prompts (the composer) ---------------------------------------------------
    def connected(self) -> list[McpConnection]:
        return [t.connection for t in self._tools.values() if t.connection.state is ServerState.CONNECTED]

    def resources(self) -> list[tuple[str, types.Resource]]:
        """(server, resource) of every connected server, for the composer's attach picker."""
        return [(c.name, r) for c in self.connected() for r in c.resources]

    def templates(self) -> list[tuple[str, types.ResourceTemplate]]:
        return [(c.name, t) for c in self.connected() for t in c.templates]

    def prompts(self) -> list[tuple[str, types.Prompt]]:
        """(server, prompt) of every connected server, for the composer's "/" list."""
        return [(c.name, p) for c in self.connected() for p in c.prompts]

    def connection(self, server: str) -> McpConnection | None:
        tool = self._tools.get(server)
        return tool.connection if tool is not None else None

    async def roots_changed(self) -> None:
        """The allowed folders changed: every connected server is told (it asks for them again)."""
        await asyncio.gather(*(c.roots_changed() for c in self.connected()), return_exceptions=True)

    def _changed(self, conn: McpConnection) -> None:
        tool = self._tools.get(conn.name)
        if tool is None or tool.connection is not conn:
            return
        if conn.state is ServerState.CONNECTED:
            tool.rebuild(self._owner_of)  # also when names are unchanged: schemas may have changed
            try:
                self.registry.register_dynamic(tool.name, tool.spec(), tool)
            except RegistryError as exc:  # a race with another server; the tool stays as it was
                log.error("MCP server %s: %s", conn.name, exc)
            return
        self.registry.notify_changed()

    def _owner_of(self, function: str) -> str | None:
        ref = self.registry.resolve(function)
        return ref.tool if ref is not None else None
