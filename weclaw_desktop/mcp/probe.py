"""Connect to a server once, list its tools, disconnect: the settings page's Test button."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from weclaw_desktop.i18n import Text
from weclaw_desktop.mcp.connection import Backoff, McpConnection, ServerState
from weclaw_desktop.mcp.tool import McpTool, ServerToolInfo
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import McpServerSettings


@dataclass
class ProbeResult:
    ok: bool
    message: str
    tools: list[tuple[str, str]] = field(default_factory=list)  # (function name, description)
    problems: list[str] = field(default_factory=list)
    text: Text | None = None  # ``message`` for people, in the UI language
    catalogue: list[ServerToolInfo] = field(default_factory=list)  # every server tool, offered or not


async def probe(
    settings: McpServerSettings,
    secrets: SecretStore | None = None,
    *,
    connect_timeout_s: float = 30.0,
    log_dir: Path | None = None,
    owner_of: Callable[[str], str | None] = lambda fn: None,
) -> ProbeResult:
    """Start the server, wait until it answers (or fails, or ``connect_timeout_s`` passes), report, stop it."""
    conn = McpConnection(
        settings,
        secrets or SecretStore(),
        backoff=Backoff(initial=3600.0),  # one attempt: no retry while we wait
        connect_timeout=connect_timeout_s,
        log_dir=log_dir,
    )
    conn.start()
    try:
        await conn.wait_for(ServerState.CONNECTED, ServerState.DOWN, within=connect_timeout_s + 5)
        if conn.state is not ServerState.CONNECTED:
            reason = conn.error or f"no answer within {connect_timeout_s:g} s"
            text = Text("mcp.test.failed", name=settings.name, reason=reason)
            return ProbeResult(ok=False, message=text.render("en"), text=text)
        tool = McpTool(conn)
        tool.rebuild(owner_of)
        name = conn.server_info.name if conn.server_info and conn.server_info.name else settings.name
        count = len(tool.get_actions())
        text = Text("mcp.test.ok", name=name, n=count)
        return ProbeResult(
            ok=True,
            message=text.render("en"),
            text=text,
            tools=[(f"{tool.name}_{a.name}", a.description) for a in tool.get_actions()],
            problems=list(tool.problems),
            catalogue=tool.catalogue(),
        )
    finally:
        await conn.stop()
