"""Helpers of the MCP tests that test modules import (fixtures are in conftest.py)."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SDK_SERVER = HERE / "sdk_server.py"
SERVERS = HERE / "servers"  # npm installs @modelcontextprotocol/server-everything here (git-ignored)
EVERYTHING = SERVERS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
INSTALL_HINT = (
    "run scripts/setup.sh --test (npm install in tests/mcp/servers; pip install mcp-server-time mcp-server-git)"
)


def need(what: str, present: bool) -> None:
    """Skip with a clear reason when a reference server is not installed; in CI it must be (fail)."""
    if present:
        return
    message = f"{what} is not installed: {INSTALL_HINT}"
    if os.environ.get("CI"):
        pytest.fail(f"CI must install the reference servers: {message}")
    pytest.skip(message)


def have_module(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def start_server(
    argv: list[str], port: int, folder: Path, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """Start a server process listening on 127.0.0.1:``port`` and wait until it accepts connections."""
    log = folder / f"server-{port}.log"
    with open(log, "w") as errfile:
        proc = subprocess.Popen(argv, env={**os.environ, **(env or {})}, stdout=errfile, stderr=errfile)
    deadline = time.monotonic() + 30
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"server {argv} did not start: {log.read_text()}") from None
            time.sleep(0.05)


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
