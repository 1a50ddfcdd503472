"""Helpers the composition tests import (conftest fixtures cannot be imported)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import psutil

from weclaw_desktop.settings import McpServerSettings, Settings

TESTS = Path(__file__).resolve().parent.parent


def _helpers(name: str, folder: str) -> ModuleType:
    """Another area's helper module, loaded by path: putting that folder on sys.path would let its
    conftest.py shadow the conftest of the folder the ui tests import theirs from."""
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, TESTS / folder / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return module


_ui = _helpers("uihelpers", "ui")
_phone = _helpers("companion_helpers", "companion")
TEST_KEY: str = _ui.TEST_KEY
keep_loop = _ui.keep_loop
close_windows = _ui.close_windows
until = _ui.until
configured_settings = _ui.configured_settings
Phone = _phone.Phone
pair_phone = _phone.pair_phone
make_file = _phone.make_file
sha = _phone.sha

WindowFactory = Callable[[Settings], Awaitable[Any]]
MCP_SERVER = TESTS / "mcp" / "mcp_test_server.py"


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
