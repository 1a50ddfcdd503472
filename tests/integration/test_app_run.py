"""``app.run``: the services start next to the runtime, the Phone action opens the pairing dialog, and
quitting leaves no server, port or child process behind."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

from fakeopenai import FakeOpenAI
from integration_helpers import (
    WindowFactory,
    alive,
    configured_settings,
    live_children,
    mcp_settings,
    phone_settings,
    until,
)

from weclaw_desktop.app import run
from weclaw_desktop.app.services import AppServices
from weclaw_desktop.mcp import tool_name
from weclaw_desktop.paths import app_paths
from weclaw_desktop.settings import SettingsStore

MCP_TOOL = tool_name("test")


def port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


async def test_run_starts_the_services_and_quitting_stops_everything(
    make_window: WindowFactory, tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    settings = phone_settings(configured_settings(fake_openai), tmp_path / "incoming")
    settings.mcp_servers = [mcp_settings("test")]
    SettingsStore.open().save(settings)
    window = await make_window(settings)
    before = live_children()
    started: list[AppServices] = []
    task = asyncio.ensure_future(run(window, app_paths(), None, started=started))
    await until(lambda: started and started[0].companion.running, 20, "the services")
    services = started[0]
    await services.mcp.wait_settled(20)
    await until(lambda: window.runtime is not None, 20, "the runtime")
    await until(lambda: window.board.state(MCP_TOOL) == "available", 5, "the MCP tool")
    await until(lambda: window.board.state("remote_file_share") == "available", 5, "remote_file_share")
    assert services.scheduler.running
    port = services.companion.port
    assert port_open(port)
    spawned = live_children() - before
    assert spawned, "the MCP server runs as a child process"

    # the toolbar's Phone action opens one non-modal pairing dialog, reused
    window.phone_action.trigger()
    dialog: Any = services.pairing_dialog
    assert dialog is not None and dialog.isVisible() and not dialog.isModal()
    window.phone_action.trigger()
    assert services.pairing_dialog is dialog

    # switching the link off in the dialog stops the server and is saved
    dialog.link.setChecked(False)
    await until(lambda: not services.companion.running, 5, "the link to stop")
    await until(lambda: window.phone_state == "off", 5, "the status bar")
    await until(lambda: window.board.state("remote_file_share") == "hidden", 5, "remote_file_share hidden")
    assert not port_open(port)
    assert SettingsStore.open().settings.companion.enabled is False
    dialog.link.setChecked(True)
    await until(lambda: services.companion.running, 5, "the link to start again")
    port = services.companion.port
    assert SettingsStore.open().settings.companion.enabled is True

    window.quit_app()
    assert await asyncio.wait_for(task, 20) == 0
    assert not services.companion.running and not port_open(port)
    assert not services.scheduler.running
    assert services.mcp.servers() == [] and window.registry.resolve(f"{MCP_TOOL}_add") is None
    await until(lambda: not any(alive(pid) for pid in spawned), 5, "the MCP server process to exit")
    assert live_children() - before == set()
    assert not dialog.isVisible()
