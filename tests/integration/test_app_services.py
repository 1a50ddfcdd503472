"""The app's services wired into the real window: reminders, MCP servers, the phone link.

Real parts throughout: the bundled tools.json, offscreen Qt widgets and the Qt notifier bridge, SQLite
in WECLAW_HOME, a real MCP server over stdio, the companion's aiohttp server on 127.0.0.1 and a phone-like
HTTP client, and the fake OpenAI server for a model turn.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import polling
import pytest
from fakeopenai import FakeOpenAI, call, text_reply, tool_reply
from integration_helpers import (
    TEST_KEY,
    Phone,
    WindowFactory,
    configured_settings,
    make_file,
    mcp_settings,
    pair_phone,
    phone_settings,
    sha,
    until,
)

from weclaw_desktop.app.services import AppServices
from weclaw_desktop.mcp import tool_name
from weclaw_desktop.paths import app_paths
from weclaw_desktop.settings import Settings, SettingsStore
from weclaw_desktop.tools._db import shared_database
from weclaw_desktop.tools.reminder_store import ReminderStore

MCP_TOOL = tool_name("test")


@pytest.fixture
async def services_for() -> AsyncIterator[Callable[[Any], AppServices]]:
    made: list[AppServices] = []

    def factory(window: Any) -> AppServices:
        services = AppServices(window, app_paths())
        made.append(services)
        return services

    yield factory
    for services in made:
        await services.stop()


def notices(window: Any) -> list[str]:
    return [str(n.message) for n in window.chat.notices()]


async def pair(http: aiohttp.ClientSession, services: AppServices, name: str = "Pixel") -> Phone:
    return await pair_phone(http, services.companion.new_pairing_code().url, name)


# --- reminders ---------------------------------------------------------------------------------------------


async def _none_active(store: ReminderStore) -> bool:
    return await asyncio.to_thread(store.query, "active") == []


async def test_missed_reminder_fires_through_the_qt_notifier_at_start(
    make_window: WindowFactory, services_for: Callable[[Any], AppServices]
) -> None:
    store = ReminderStore(shared_database(app_paths().database))
    await asyncio.to_thread(store.ensure)
    due = time.time() - 120
    await asyncio.to_thread(store.create, "Call the dentist", "once", "", "UTC", due)
    window = await make_window(Settings())
    services = services_for(window)
    await services.start()
    assert services.scheduler.running and services.scheduler.can_deliver
    await until(lambda: window.notifier.sent, 5, "the reminder notification")
    title, body = window.notifier.sent[0]
    assert title == "Reminder · 提醒"
    assert body.startswith("Call the dentist\n(late: it was due ")
    # recorded as shown right after the notification went out (notify first, then mark): wait for the record
    await polling.until(lambda: _none_active(store), message="the reminder recorded as shown")
    assert len(window.notifier.sent) == 1  # shown once, not again
    await services.stop()
    assert not services.scheduler.running


async def test_reminder_the_model_creates_pops_up_when_due(
    make_window: WindowFactory, services_for: Callable[[Any], AppServices], fake_openai: FakeOpenAI
) -> None:
    from weclaw_desktop.app import create_runtime

    window = await make_window(configured_settings(fake_openai))
    runtime = create_runtime(window, api_key=TEST_KEY, logs=False)
    services = services_for(window)
    await services.start()
    fake_openai.push(
        tool_reply(call("reminder_create", {"message": "Stretch your legs", "after": "1 second"})),
        text_reply("I will remind you."),
    )
    session = await runtime.create_session()
    done = await runtime.start_turn(session.id, "remind me in a second to stretch").wait()
    assert done.reason == "completed", done.message
    tool_messages = [m for m in fake_openai.messages(-1) if m["role"] == "tool"]
    assert "desktop notification" in tool_messages[0]["content"]  # the tool saw the running scheduler
    await until(lambda: window.notifier.sent, 5, "the reminder notification")
    assert window.notifier.sent == [("Reminder · 提醒", "Stretch your legs")]


# --- MCP ---------------------------------------------------------------------------------------------------


async def test_mcp_server_from_settings_shows_in_the_panel_runs_a_turn_and_follows_saved_settings(
    make_window: WindowFactory, services_for: Callable[[Any], AppServices], fake_openai: FakeOpenAI
) -> None:
    from weclaw_desktop.app import create_runtime

    settings = configured_settings(fake_openai)
    settings.agent.approvals.rules["gui"] = {"low": "allow", "medium": "allow", "high": "allow"}
    settings.mcp_servers = [mcp_settings("test")]
    window = await make_window(settings)
    runtime = create_runtime(window, api_key=TEST_KEY, logs=False)
    services = services_for(window)
    assert [str(title) for title, _ in window._extra_pages] == ["MCP servers"]
    assert services.mcp_page.manager is services.mcp
    await services.start()
    await services.mcp.wait_settled(20)
    await until(lambda: window.board.state(MCP_TOOL) == "available", 5, "the MCP tool in the panel")
    assert window.tool_panel.status_text(MCP_TOOL) == "Available"

    # the model calls the server's tool through the window's runtime
    fake_openai.push(tool_reply(call(f"{MCP_TOOL}_add", {"a": 2, "b": 40})), text_reply("It is 42."))
    session = await runtime.create_session()
    done = await runtime.start_turn(session.id, "2 + 40?").wait()
    assert done.reason == "completed", done.message
    assert f"{MCP_TOOL}_add" in fake_openai.tool_names(0)
    tool_messages = [m for m in fake_openai.messages(-1) if m["role"] == "tool"]
    assert len(tool_messages) == 1 and "42" in tool_messages[0]["content"]

    # Settings > MCP servers > Remove > Save: the server stops and leaves the panel
    dialog = window.open_settings()
    titles = [dialog.nav.item(i).text() for i in range(dialog.nav.count())]
    assert titles[-1] == "MCP servers" and dialog.pages[-1] is services.mcp_page
    dialog.show_page(len(titles) - 1)
    services.mcp_page.server_list.setCurrentRow(0)
    services.mcp_page.remove_button.click()
    assert dialog.save(), dialog.message.text()
    assert SettingsStore.open().settings.mcp_servers == []
    await until(lambda: window.registry.resolve(f"{MCP_TOOL}_add") is None, 10, "the server to stop")
    await until(lambda: MCP_TOOL not in window.board.rows, 5, "the tool to leave the panel")
    with pytest.raises(KeyError):
        window.tool_panel.item_for(MCP_TOOL)
    assert services.mcp.servers() == []


# --- phone link --------------------------------------------------------------------------------------------


async def test_phone_link_enabled_makes_remote_file_share_available_and_send_to_phone_delivers(
    make_window: WindowFactory, services_for: Callable[[Any], AppServices], tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    window = await make_window(phone_settings(configured_settings(fake_openai), tmp_path / "incoming"))
    assert window.board.state("remote_file_share") == "hidden"
    assert window.phone_state == "off" and window.card_actions.send_to_phone is None
    services = services_for(window)
    await services.start()
    assert services.companion.running and services.companion.host == "127.0.0.1"
    assert window.registry.bridge("companion") is services.companion
    await until(lambda: window.board.state("remote_file_share") == "available", 5, "remote_file_share available")
    await until(lambda: window.phone_label.text() == "Phone link on · no phone connected", 5, "waiting status")
    assert window.phone_state == "waiting" and window.card_actions.send_to_phone is not None
    out = make_file(tmp_path / "out", "report.pdf", 70_000)

    # no phone paired yet: the user is told what to do
    assert not await services.deliver([out])
    assert notices(window)[-1] == "No phone is paired. Open Phone in the toolbar and scan the code first."
    assert window.stack.currentWidget() is window.chat  # the notice is on screen, not behind the welcome page

    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
        phone = await pair(http, services, "Pixel")
        stream = await phone.open_events()  # the phone page is open: the phone is online
        try:
            await until(lambda: window.phone_label.text() == "Phone connected: Pixel", 5, "connected status")
            assert window.phone_state == "connected"

            # "Send to phone" on a file card: offered, fetched (every record authenticated), then saved by a tap
            window.card_actions.send_to_phone([out])
            await until(lambda: "Sending report.pdf to Pixel…" in notices(window), 5, "the offer")
            offers = await phone.offers()
            assert [f["name"] for f in offers[0]["files"]] == ["report.pdf"]
            f = offers[0]["files"][0]
            assert await phone.download(offers[0]["offer"], f) == out.read_bytes()
            await phone.call("/api/v1/ack", {"offer": offers[0]["offer"], "file": f["id"], "state": "ready"})
            ready = "report.pdf is on Pixel: tap Save on the phone to keep it"
            await until(lambda: notices(window)[-1] == ready, 5, "the held-on-the-phone notice")
            await phone.call("/api/v1/ack", {"offer": offers[0]["offer"], "file": f["id"], "state": "saved"})
            await until(lambda: notices(window)[-1] == "report.pdf saved on Pixel", 5, "the delivery notice")

            # a file that is gone is reported, not silently dropped
            assert not await services.deliver([tmp_path / "out" / "gone.txt"])
            assert notices(window)[-1].startswith("Could not send gone.txt to the phone: ")

            # a photo from the phone: saved, shown in the chat and as a tray notification
            photo = b"jpeg bytes " * 1000
            assert (await phone.send("photo.jpg", photo))["sha256"] == sha(photo)
            saved = tmp_path / "incoming" / "photo.jpg"
            assert saved.read_bytes() == photo
            await until(lambda: window.notifier.sent, 5, "the tray notification")
            assert window.notifier.sent[-1] == ("File from your phone", "photo.jpg was saved on this computer")
            assert notices(window)[-1] == f"Received photo.jpg from Pixel, saved to {saved}"
        finally:
            stream.close()

    await services.stop()
    assert not services.companion.running
    assert window.registry.bridge("companion") is None
    await until(lambda: window.board.state("remote_file_share") == "hidden", 5, "remote_file_share hidden again")
    assert window.phone_state == "off" and window.card_actions.send_to_phone is None


async def test_phone_link_on_a_busy_port_shows_an_error_and_the_rest_still_starts(
    make_window: WindowFactory, services_for: Callable[[Any], AppServices], tmp_path: Path
) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        settings = phone_settings(Settings(), tmp_path / "incoming")
        settings.companion.port = busy.getsockname()[1]
        window = await make_window(settings)
        services = services_for(window)
        await services.start()
        assert not services.companion.running
        assert window.phone_state == "error"
        assert window.phone_label.text().startswith("Phone link error: ")
        assert window.board.state("remote_file_share") == "hidden"
        assert window.card_actions.send_to_phone is None
        assert services.scheduler.running  # reminders work regardless
