"""Fixtures for the MCP tests: a real MCP server (tests/mcp/mcp_test_server.py) over stdio and HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from weclaw_desktop.mcp import Backoff, McpManager, secret_key
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import McpServerSettings
from weclaw_desktop.toolkit.registry import ToolRegistry

HERE = Path(__file__).resolve().parent
SERVER = HERE / "mcp_test_server.py"
HTTP_KEY = "hk-test-header-secret-4711"


@pytest.fixture
def calls_file(tmp_path: Path) -> Path:
    """Every call the test server receives is appended here."""
    return tmp_path / "server-calls.txt"


@pytest.fixture
def server_calls(calls_file: Path) -> Callable[[], list[str]]:
    """The names of the tools the test server has run so far."""
    return lambda: calls_file.read_text(encoding="utf-8").split() if calls_file.exists() else []


@pytest.fixture
def stdio_settings(calls_file: Path) -> Callable[..., McpServerSettings]:
    def make(name: str = "test", **extra: Any) -> McpServerSettings:
        env = {"WECLAW_TEST_CALLS": str(calls_file), **extra.pop("env", {})}
        return McpServerSettings(
            name=name, transport="stdio", command=sys.executable, args=[str(SERVER)], env=env, **extra
        )

    return make


@pytest.fixture
def registry() -> ToolRegistry:
    from helpers import manifest

    return ToolRegistry(manifest())


@pytest.fixture
async def manager(registry: ToolRegistry, tmp_path: Path) -> AsyncIterator[McpManager]:
    mgr = McpManager(
        registry,
        SecretStore(),
        backoff=Backoff(initial=2.0, factor=2.0, maximum=8.0),  # a server that is down stays down while we look
        health_interval=0.5,
        connect_timeout=20.0,
        log_dir=tmp_path / "logs",
    )
    yield mgr
    await mgr.stop_all()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_key() -> str:
    """The X-Api-Key the HTTP test server requires."""
    return HTTP_KEY


@pytest.fixture(scope="session")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The test server over streamable HTTP on 127.0.0.1 (one for the session): its URL and calls file.

    Requests need ``X-Api-Key: HTTP_KEY``.
    """
    port = _free_port()
    folder = tmp_path_factory.mktemp("http")
    log, calls_path = folder / "server.log", folder / "calls.txt"
    env = {**os.environ, "EXPECTED_API_KEY": HTTP_KEY, "WECLAW_TEST_CALLS": str(calls_path)}
    with open(log, "w") as errfile:
        proc = subprocess.Popen(
            [sys.executable, str(SERVER), "http", str(port)], env=env, stdout=errfile, stderr=errfile
        )
    deadline = time.monotonic() + 30
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"test MCP HTTP server did not start: {log.read_text()}") from None
            time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/mcp", calls_path
    proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture
def http_settings(http_server: tuple[str, Path], memory_keyring: Any) -> Callable[..., McpServerSettings]:
    """Settings for the HTTP test server, its header secret stored in the (memory) keyring."""
    SecretStore().set(secret_key("web", "header", "X-Api-Key"), HTTP_KEY)

    def make(name: str = "web", **extra: Any) -> McpServerSettings:
        if name != "web":
            SecretStore().set(secret_key(name, "header", "X-Api-Key"), HTTP_KEY)
        extra.setdefault("secret_headers", ["X-Api-Key"])
        return McpServerSettings(name=name, transport="http", url=http_server[0], **extra)

    return make


@pytest.fixture
def http_calls(http_server: tuple[str, Path]) -> Callable[[], list[str]]:
    """The tools the HTTP test server has run since this test started."""
    path = http_server[1]
    before = len(path.read_text(encoding="utf-8").split()) if path.exists() else 0
    return lambda: (path.read_text(encoding="utf-8").split() if path.exists() else [])[before:]


# --- the reference servers (installed by scripts/setup.sh --test) and our SDK server ---------------------
sys.path.append(str(HERE))  # mcp_support (appended: tests/ and its conftest stay first)
from mcp_support import EVERYTHING, SDK_SERVER, need  # noqa: E402


@pytest.fixture
def everything_js() -> Path:
    import shutil

    need("@modelcontextprotocol/server-everything (and node)", EVERYTHING.exists() and shutil.which("node") is not None)
    return EVERYTHING


@pytest.fixture
def sdk_settings(calls_file: Path) -> Callable[..., McpServerSettings]:
    """Settings for our SDK server over stdio (calls recorded in ``calls_file`` with their arguments)."""

    def make(name: str = "sdk", **extra: Any) -> McpServerSettings:
        env = {"WECLAW_TEST_CALLS": str(calls_file), **extra.pop("env", {})}
        return McpServerSettings(
            name=name, transport="stdio", command=sys.executable, args=[str(SDK_SERVER)], env=env, **extra
        )

    return make


@pytest.fixture
def sdk_calls(calls_file: Path) -> Callable[[], list[tuple[str, dict[str, Any]]]]:
    """(tool, arguments) of every call our SDK server received so far."""
    import json

    def read() -> list[tuple[str, dict[str, Any]]]:
        if not calls_file.exists():
            return []
        out = []
        for line in calls_file.read_text(encoding="utf-8").splitlines():
            name, _, args = line.partition(" ")
            out.append((name, json.loads(args) if args else {}))
        return out

    return read
