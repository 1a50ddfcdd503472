"""MCP servers for one-shot commands (``weclaw tools``): start them, let them settle, do the work, stop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TypeVar

from weclaw_desktop.mcp.manager import McpManager
from weclaw_desktop.paths import app_paths
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import McpServerSettings
from weclaw_desktop.toolkit.registry import ToolRegistry

T = TypeVar("T")


def run_with_servers(
    registry: ToolRegistry,
    servers: Sequence[McpServerSettings],
    work: Callable[[], T] | Callable[[McpManager], T],
    *,
    wait_s: float = 20.0,
    secrets: SecretStore | None = None,
) -> T:
    """Register and start ``servers``, wait until each is up or down (at most ``wait_s``), run ``work``."""

    async def main() -> T:
        manager = McpManager(registry, secrets, connect_timeout=wait_s, log_dir=app_paths().logs)
        try:
            await manager.apply(servers)
            await manager.wait_settled(wait_s)
            return work(manager) if _takes_manager(work) else work()  # type: ignore[call-arg]
        finally:
            await manager.stop_all()

    return asyncio.run(main())


def _takes_manager(work: Callable[..., object]) -> bool:
    import inspect

    try:
        return len(inspect.signature(work).parameters) == 1
    except (TypeError, ValueError):
        return False
