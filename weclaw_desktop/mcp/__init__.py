"""MCP servers as a tool source: each server is one dynamic tool under the same dispatcher as built-ins.

- :mod:`.connection`: one server's connection (stdio or streamable HTTP), watched and restarted.
- :mod:`.tool`: the dynamic tool ``mcp_<server>``; :mod:`.names` and :mod:`.schema` make its functions.
- :mod:`.manager`: the servers of the settings, kept in line with them and registered.
- :mod:`.convert`: MCP results to :class:`~weclaw_desktop.toolkit.base.ToolResult`.
- :mod:`.probe`: connect once and list tools (the settings page's Test button, ``weclaw tools``).
"""

from weclaw_desktop.mcp.config import secret_key
from weclaw_desktop.mcp.connection import Backoff, McpConnection, ServerState
from weclaw_desktop.mcp.manager import McpManager, ServerStatus
from weclaw_desktop.mcp.names import action_name, tool_name
from weclaw_desktop.mcp.tool import McpTool

__all__ = [
    "Backoff",
    "McpConnection",
    "McpManager",
    "McpTool",
    "ServerState",
    "ServerStatus",
    "action_name",
    "secret_key",
    "tool_name",
]
