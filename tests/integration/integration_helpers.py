"""Helpers the composition tests import (conftest fixtures cannot be imported)."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import psutil

from weclaw_desktop.settings import McpServerSettings, Settings

WindowFactory = Callable[[Settings], Awaitable[Any]]
MCP_SERVER = Path(__file__).resolve().parent.parent / "mcp" / "mcp_test_server.py"


def mcp_settings(name: str = "test") -> McpServerSettings:
    return McpServerSettings(name=name, transport="stdio", command=sys.executable, args=[str(MCP_SERVER)])


def phone_settings(settings: Settings, incoming: Path) -> Settings:
    """The phone link on loopback, any free port, new phones accepted without asking (a test has no user)."""
    settings.companion.enabled = True
    settings.companion.interface = "127.0.0.1"
    settings.companion.port = 0
    settings.companion.auto_accept = True
    settings.companion.incoming_dir = str(incoming)
    return settings


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def live_children() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True) if alive(p.pid)}
