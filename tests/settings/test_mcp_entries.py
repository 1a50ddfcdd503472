"""#15 item 1: every mcp_servers entry is checked on its own. A bad one (an unknown transport, a name over 32
characters, no command, not even an object, a second server of the same name) is kept exactly as
written, never started, shown with its error on the MCP page, in ``weclaw doctor`` and in the window's
notice; the provider and every other server are untouched; saving keeps the bad entry's JSON until the
user edits or removes it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fakeopenai import FakeOpenAI
from settings_support import read_json, user_file, write_settings

from weclaw_desktop.settings import ProblemKind, SettingsStore
from weclaw_desktop.ui.mcp_page import McpPage

SSE = {"name": "legacy", "transport": "websocket", "url": "https://old.example.com/ws", "future_flag": 1}
LONG = {"name": "a-server-name-that-is-longer-than-32", "command": "npx", "args": ["-y", "x"]}
NO_COMMAND = {"name": "nocmd", "args": ["--stdio"]}
TWIN = {"name": "time", "command": "other"}


def _file(base_url: str = "https://api.deepseek.com/v1") -> dict[str, Any]:
    doc = user_file(base_url)
    time, web = doc["mcp_servers"]
    doc["mcp_servers"] = [time, SSE, web, LONG, NO_COMMAND, "just a string", TWIN]
    return doc


def test_a_bad_entry_keeps_the_provider_and_every_other_server() -> None:
    write_settings(_file())
    store = SettingsStore.open()
    s = store.settings
    assert s.provider.base_url == "https://api.deepseek.com/v1" and s.provider.model == "fake-model"
    assert s.tools.policy.deny == ["faulty"] and s.tools.allowed_roots == ["/srv/projects", "~/Documents"]
    assert [m.name for m in s.mcp_servers] == ["time", "web"]
    assert s.mcp_servers[1].trusted is True
    bad = {e.index: e for e in s.mcp_invalid}
    assert sorted(bad) == [1, 3, 4, 5, 6]
    assert "transport" in bad[1].error and "'stdio', 'http' or 'sse'" in bad[1].error
    assert "name" in bad[3].error and bad[3].name == LONG["name"]
    assert "no command is set" in bad[4].error
    assert "must be an object" in bad[5].error
    assert "also called 'time'" in bad[6].error
    problems = [p for p in store.errors if p.kind is ProblemKind.MCP_ENTRY]
    assert [p.path for p in problems] == [f"mcp_servers[{i}]" for i in (1, 3, 4, 5, 6)]
    assert all(p.used == "not started" and p.kept for p in problems)
    assert [p for p in store.errors if p.kind is not ProblemKind.MCP_ENTRY] == []  # nothing else went wrong


def test_saving_keeps_bad_entries_as_written_in_their_places() -> None:
    write_settings(_file())
    store = SettingsStore.open()
    store.update(lambda s: setattr(s.ui, "theme", "light"))
    servers = read_json()["mcp_servers"]
    assert servers[1] == SSE and servers[3] == LONG and servers[4] == NO_COMMAND
    assert servers[5] == "just a string" and servers[6] == TWIN
    assert [servers[0]["name"], servers[2]["name"]] == ["time", "web"]
    again = SettingsStore.open()  # and the next start sees the same
    assert [e.raw for e in again.settings.mcp_invalid] == [SSE, LONG, NO_COMMAND, "just a string", TWIN]


def test_removing_a_good_server_keeps_the_bad_ones() -> None:
    write_settings(_file())
    store = SettingsStore.open()
    store.update(lambda s: setattr(s, "mcp_servers", [m for m in s.mcp_servers if m.name != "time"]))
    servers = read_json()["mcp_servers"]
    assert SSE in servers and LONG in servers and [x for x in servers if isinstance(x, dict) and x.get("name") == "web"]
    assert not [x for x in servers if isinstance(x, dict) and x.get("command") == "uvx"]


def test_mcp_servers_that_is_not_a_list_is_one_problem() -> None:
    write_settings(user_file(mcp_servers={"time": {"command": "uvx"}}))
    store = SettingsStore.open()
    assert store.settings.mcp_servers == [] and store.settings.provider.model == "fake-model"
    assert [p.path for p in store.errors] == ["mcp_servers"]
    store.update(lambda s: setattr(s.ui, "theme", "light"))
    assert read_json()["mcp_servers"] == {"time": {"command": "uvx"}}


# --- the MCP page ----------------------------------------------------------------------------------
def _page(qtbot: Any, store: SettingsStore) -> McpPage:
    from weclaw_desktop.i18n import set_language

    set_language("en")
    page = McpPage()
    qtbot.addWidget(page)
    page.load(store.settings)
    return page


def test_the_page_shows_bad_entries_as_rows_with_their_error(qtbot: Any, memory_keyring: Any) -> None:
    write_settings(_file())
    store = SettingsStore.open()
    page = _page(qtbot, store)
    rows = [page.server_list.item(i).text() for i in range(page.server_list.count())]
    assert rows == ["time", "⚠ legacy", "web", f"⚠ {LONG['name']}", "⚠ nocmd", "⚠ (no name)", "⚠ time"]
    assert "'stdio', 'http' or 'sse'" in page.server_list.item(1).toolTip()
    page.server_list.setCurrentRow(1)
    assert page.status_label.text().startswith("⚠ This entry cannot be used")
    assert page.url_edit.text() == "https://old.example.com/ws"  # what could be read is in the form
    page.server_list.setCurrentRow(3)
    assert page.name_edit.text() == LONG["name"]  # shown as written, not cut
    assert page.problems() == []  # untouched bad entries do not block saving the others

    candidate = store.snapshot()
    page.apply(candidate)
    store.save(candidate)
    assert [s for s in read_json()["mcp_servers"] if s in (SSE, LONG, NO_COMMAND, TWIN)] == [
        SSE,
        LONG,
        NO_COMMAND,
        TWIN,
    ]


def test_editing_a_bad_entry_makes_it_an_ordinary_one(qtbot: Any, memory_keyring: Any) -> None:
    write_settings(_file())
    store = SettingsStore.open()
    page = _page(qtbot, store)
    page.server_list.setCurrentRow(4)  # nocmd
    page.command_edit.setText("uvx")
    page.command_edit.textEdited.emit("uvx")  # what typing does
    assert page.server_list.item(4).text() == "nocmd"
    candidate = store.snapshot()
    page.apply(candidate)
    store.save(candidate)
    assert "nocmd" in [m.name for m in store.settings.mcp_servers]
    saved = [s for s in read_json()["mcp_servers"] if isinstance(s, dict) and s.get("name") == "nocmd"]
    assert saved[0]["command"] == "uvx" and saved[0]["args"] == ["--stdio"]
    assert "mcp_servers[4]" not in [p.path for p in store.errors]


def test_an_edited_bad_entry_that_is_still_bad_blocks_the_save(qtbot: Any, memory_keyring: Any) -> None:
    write_settings(_file())
    store = SettingsStore.open()
    page = _page(qtbot, store)
    page.server_list.setCurrentRow(3)
    page.name_edit.textEdited.emit(page.name_edit.text())  # touched, still 36 characters
    assert any("name" in p for p in page.problems())


def test_removing_a_bad_entry_drops_it_for_good(qtbot: Any, memory_keyring: Any) -> None:
    write_settings(_file())
    store = SettingsStore.open()
    page = _page(qtbot, store)
    page.server_list.setCurrentRow(1)
    page.remove_server()
    candidate = store.snapshot()
    page.apply(candidate)
    store.save(candidate)
    assert SSE not in read_json()["mcp_servers"] and LONG in read_json()["mcp_servers"]
    assert "mcp_servers[1]" not in [p.path for p in store.errors]


# --- weclaw doctor ---------------------------------------------------------------------------------
async def test_doctor_prints_each_bad_entry_and_fails(
    fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from weclaw_desktop.cli import main

    monkeypatch.setenv("WECLAW_API_KEY", "sk-doctor-test-1234")
    write_settings(_file(fake_openai.base_url))
    code = await __import__("asyncio").to_thread(main, ["doctor", "--no-qt"])
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if " settings " in f" {line} "]
    assert code == 1
    fails = [line for line in lines if line.startswith("FAIL")]
    assert len(fails) == 5 and all("mcp_servers[" in line for line in fails)
    assert any("legacy" in line and "'stdio', 'http' or 'sse'" in line for line in fails)
    assert any("the file as it was is kept in" in line for line in lines)
    endpoint = next(line for line in out.splitlines() if "endpoint" in line)
    assert endpoint.startswith("OK")  # the provider survived: doctor reached it

    code = await __import__("asyncio").to_thread(main, ["doctor", "--no-qt", "--json"])
    checks = json.loads(capsys.readouterr().out)
    data = [c["data"] for c in checks if c["name"] == "settings" and c["level"] == "fail"]
    assert {d["path"] for d in data} == {f"mcp_servers[{i}]" for i in (1, 3, 4, 5, 6)}
    assert {d["kind"] for d in data} == {"mcp-entry"}


def test_importing_servers_keeps_the_bad_entries_the_provider_and_the_others(
    tmp_path: Any, memory_keyring: Any, capsys: Any
) -> None:
    """#15: ``weclaw mcp import`` goes through the store like every writer: the bad entries stay exactly as
    written in their places, the provider and the other servers are untouched, a name already taken by a
    bad entry is not reused, and the imported token goes to the keyring, not the file."""
    from weclaw_desktop.cli import main
    from weclaw_desktop.secrets import SecretStore

    write_settings(_file())
    config = tmp_path / "claude_desktop_config.json"
    config.write_text(
        json.dumps({"mcpServers": {"legacy": {"command": "npx", "env": {"API_TOKEN": "tok-0123456789abcd"}}}}),
        encoding="utf-8",
    )
    assert main(["mcp", "import", str(config), "--yes"]) == 0
    assert "renamed from 'legacy'" in capsys.readouterr().err  # the bad entry keeps its name
    servers = read_json()["mcp_servers"]
    assert servers[1] == SSE and servers[3] == LONG and servers[4] == NO_COMMAND
    assert servers[5] == "just a string" and servers[6] == TWIN
    assert servers[-1]["name"] == "legacy-2" and servers[-1]["secret_env"] == ["API_TOKEN"]
    assert "tok-0123456789abcd" not in json.dumps(read_json())
    assert SecretStore().get("mcp.legacy-2.env.API_TOKEN") == "tok-0123456789abcd"
    store = SettingsStore.open()
    assert store.settings.provider.model == "fake-model"
    assert [m.name for m in store.settings.mcp_servers] == ["time", "web", "legacy-2"]
