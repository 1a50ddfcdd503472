"""One writer of settings.json: the store. Two checks that fail when someone adds a second one.

1. In the source: outside ``settings/store.py`` no module names the settings file's path, spells
   "settings.json" as a value, or calls ``.save(...)`` on something called settings; the schema has no
   ``save``/``load`` of its own.
2. At run time: an audit hook sees every open-for-writing, rename and delete of a file in the config
   folder while the real GUI writers run (tool switch, settings dialog with the MCP page, phone link
   settings, window geometry) and the CLI readers (doctor); each write must come from the store's code
   (the GUI's store writes on its writer thread: the hook walks that thread's stack to the store).
"""

from __future__ import annotations

import ast
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakeopenai import FakeOpenAI
from settings_support import TEST_KEY, user_file, write_settings, write_tools

from weclaw_desktop.paths import app_paths
from weclaw_desktop.settings import Settings, SettingsStore

PACKAGE = Path(__file__).resolve().parents[2] / "weclaw_desktop"
STORE = PACKAGE / "settings" / "store.py"
DEFINES_THE_PATH = PACKAGE / "paths.py"


# --- 1. the source --------------------------------------------------------------------------------------
def _offences(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "settings_file":
            found.append(f"{node.lineno}: uses .settings_file")
        elif isinstance(node, ast.Constant) and node.value == "settings.json":
            found.append(f"{node.lineno}: spells 'settings.json'")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "save"
            and "settings" in ast.unparse(node.func.value).lower()
        ):
            found.append(f"{node.lineno}: {ast.unparse(node.func)}(...)")
    return found


def test_no_module_but_the_store_writes_settings_json() -> None:
    offenders = {
        str(p.relative_to(PACKAGE)): hits
        for p in PACKAGE.rglob("*.py")
        if p not in (STORE, DEFINES_THE_PATH) and (hits := _offences(p))
    }
    assert offenders == {}
    assert not hasattr(Settings, "save") and not hasattr(Settings, "load")


def test_the_source_check_catches_an_offender(tmp_path: Path) -> None:
    bad = tmp_path / "x.py"
    bad.write_text(
        "def f(window, paths):\n"
        "    window.settings.save()\n"
        "    paths.settings_file.write_text('{}')\n"
        "    open(paths.config / 'settings.json', 'w')\n",
        encoding="utf-8",
    )
    assert [h.split(":")[0] for h in _offences(bad)] == ["2", "3", "4"]


# --- 2. at run time -------------------------------------------------------------------------------------
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


class _Recorder:
    def __init__(self, folder: Path) -> None:
        self.folder = str(folder.resolve())
        self.writes: list[tuple[str, str, bool]] = []  # (event, path, from the store)


_active: list[_Recorder] = []
_installed = False
_guard = threading.local()


def _from_store() -> bool:
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename == str(STORE):
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if not _active or getattr(_guard, "busy", False):
        return
    if event == "open":
        path, mode, flags = args
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            mode is None and isinstance(flags, int) and flags & _WRITE_FLAGS
        )
        targets = [path] if writing else []
    elif event in ("os.rename", "os.remove", "os.truncate", "shutil.copyfile", "shutil.move"):
        targets = [a for a in args[:2] if isinstance(a, (str, bytes, os.PathLike))]
    else:
        return
    _guard.busy = True
    try:
        for target in targets:
            if isinstance(target, int):
                continue
            text = os.fsdecode(target)
            recorder = _active[-1]
            if os.path.abspath(text).startswith(recorder.folder):
                recorder.writes.append((event, os.path.basename(text), _from_store()))
    finally:
        _guard.busy = False


@pytest.fixture
def writes() -> Iterator[_Recorder]:
    global _installed
    if not _installed:
        sys.addaudithook(_hook)  # cannot be removed: it does nothing while no recorder is active
        _installed = True
    recorder = _Recorder(app_paths().ensure().config)
    _active.append(recorder)
    yield recorder
    _active.remove(recorder)


def test_the_hook_sees_a_write_that_is_not_the_stores(writes: _Recorder) -> None:
    """The check can fail: a direct write of the file is recorded as not coming from the store."""
    app_paths().settings_file.write_text("{}", encoding="utf-8")
    assert ("open", "settings.json", False) in writes.writes
    SettingsStore.open().update(lambda s: setattr(s.ui, "theme", "dark"))
    assert writes.writes[-1][0] == "os.rename" and writes.writes[-1][2] is True


async def test_every_gui_writer_goes_through_the_store(
    qtbot: Any, tmp_path: Path, fake_openai: FakeOpenAI, writes: _Recorder, memory_keyring: Any
) -> None:
    from uihelpers import close_windows, keep_loop

    from weclaw_desktop.app import create_runtime
    from weclaw_desktop.app.services import AppServices
    from weclaw_desktop.i18n import set_language
    from weclaw_desktop.ui.boot import build_window

    keep_loop()
    set_language("en")
    write_settings(user_file(fake_openai.base_url, agent__max_rounds="ten"))  # the test's own write
    writes.writes.clear()
    store = SettingsStore.open()
    window = build_window(store, tools_json=write_tools(tmp_path))
    create_runtime(window, api_key=TEST_KEY, logs=False)
    services = AppServices(window, app_paths())
    try:  # the window's store writes behind: each step is flushed, so saves are not merged into one write
        window.switch_tool("echo", False)  # the tool panel's switch
        assert store.flush() is None
        dialog = window.open_settings()  # Settings dialog, with the MCP page added by the services
        dialog.agent_page.max_rounds.setValue(5)
        assert dialog.save(), dialog.message.text()
        assert store.flush() is None
        services.companion.settings.auto_accept = True  # what the pairing dialog does, then it says so
        services._companion_settings_changed()
        assert store.flush() is None
        window.resize(900, 640)
    finally:
        await services.stop()
        await close_windows([window])  # quitting saves the window geometry
    assert SettingsStore.open().settings.companion.auto_accept is True
    assert SettingsStore.open().settings.agent.max_rounds == 5
    assert writes.writes, "the writers wrote nothing: the check saw nothing"
    foreign = [w for w in writes.writes if not w[2]]
    assert foreign == []
    renamed = [w for w in writes.writes if w[0] == "os.rename"]
    assert len(renamed) >= 4  # switch, dialog, phone link, geometry: four saves, each one rename


async def test_the_cli_only_reads(
    fake_openai: FakeOpenAI, writes: _Recorder, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """doctor, tools and models read through the store and write nothing (not even a broken copy of a good
    file)."""
    import asyncio

    from weclaw_desktop.cli import main

    monkeypatch.setenv("WECLAW_API_KEY", TEST_KEY)
    write_settings(user_file(fake_openai.base_url))
    writes.writes.clear()
    assert await asyncio.to_thread(main, ["doctor", "--no-qt"]) == 0, capsys.readouterr().out
    assert await asyncio.to_thread(main, ["models"]) == 0
    assert await asyncio.to_thread(main, ["tools", "--no-mcp"]) == 0
    assert writes.writes == []


async def test_chat_warns_about_settings_problems_and_runs_on_a_copy(
    fake_openai: FakeOpenAI, writes: _Recorder, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """``weclaw chat`` says what it could not read (one stderr line each), answers anyway, and its
    command-line overrides (--max-rounds, --model) never reach the file."""
    import asyncio

    from fakeopenai import text_reply

    from weclaw_desktop.cli import main

    monkeypatch.setenv("WECLAW_API_KEY", TEST_KEY)
    write_settings(user_file(fake_openai.base_url, agent__max_rounds="ten"))
    writes.writes.clear()
    fake_openai.push(text_reply("hello there"))
    argv = ["chat", "hi", "--new", "--no-mcp", "--max-rounds", "3", "--model", "fake-model"]
    code = await asyncio.to_thread(main, argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "hello there" in captured.out
    warnings = [line for line in captured.err.splitlines() if line.startswith("warning: settings:")]
    assert len(warnings) == 1 and "agent.max_rounds" in warnings[0]
    assert [w for w in writes.writes if w[1] == "settings.json" or w[0] == "os.rename"] == []
    assert SettingsStore.open().errors[0].path == "agent.max_rounds"  # the file is as the user left it
