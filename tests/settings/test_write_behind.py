"""Write-behind (the GUI's store): the settings change in memory at once and the file is written on the
store's writer thread. What must survive: the order of saves (a later one never lands before an earlier
one, the last one wins on disk), a whole file at every moment, the writes on exit, and a failed write
(a full disk: a real tiny tmpfs; a read-only folder: a tmpfs remounted read-only, or a folder without
write permission when not root) that reaches the user and loses nothing: the settings stay in use, the
old file stays whole, the next save or the flush at quit writes them once the disk takes them again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from settings_support import user_file, write_tools

from weclaw_desktop.paths import AppPaths, app_paths
from weclaw_desktop.settings import SettingsChange, SettingsStore

WRITER_THREAD = "weclaw-settings"


def _disabled(path: Path) -> list[str]:
    return list(json.loads(path.read_text(encoding="utf-8"))["tools"]["policy"]["disabled"])


def _write_file(paths: AppPaths) -> bytes:
    paths.settings_file.parent.mkdir(parents=True, exist_ok=True)
    paths.settings_file.write_text(json.dumps(user_file(), indent=1), encoding="utf-8")
    return paths.settings_file.read_bytes()


def _temps(paths: AppPaths) -> list[str]:
    return [p.name for p in paths.settings_file.parent.iterdir() if p.name.startswith(".settings-")]


# --- real failing folders ---------------------------------------------------------------------------------
def _mount_tmpfs(where: Path, size: str) -> bool:
    if sys.platform != "linux" or os.geteuid() != 0:
        return False
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
    return done.returncode == 0


def _umount(where: Path) -> None:
    subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[AppPaths]:
    """A 16 KiB tmpfs holding WECLAW_HOME's config folder with a settings file, then filled to the brim."""
    disk = tmp_path / "disk"
    if not _mount_tmpfs(disk, "16k"):
        pytest.skip("no tiny tmpfs here (needs Linux and root to mount one)")
    try:
        paths = app_paths(disk / "home")
        _write_file(paths)
        fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)  # every free block: no room for a temp file
        try:
            while os.write(fd, b"\0" * 1024):
                pass
        except OSError:
            pass
        finally:
            os.close(fd)
        yield paths
    finally:
        _umount(disk)


@pytest.fixture
def read_only_folder(tmp_path: Path) -> Iterator[tuple[AppPaths, Any]]:
    """A config folder with a settings file that cannot be written to; yields (paths, make_writable)."""
    disk = tmp_path / "ro"
    if _mount_tmpfs(disk, "1m"):
        paths = app_paths(disk / "home")
        _write_file(paths)
        remount = ["mount", "-o", "remount,ro", str(disk)]
        subprocess.run(remount, check=True, capture_output=True)

        def writable() -> None:
            subprocess.run(["mount", "-o", "remount,rw", str(disk)], check=True, capture_output=True)

        try:
            yield paths, writable
        finally:
            _umount(disk)
        return
    if sys.platform == "win32" or os.geteuid() == 0:
        pytest.skip("no read-only folder here (root ignores permissions and cannot mount)")
    paths = app_paths(disk / "home")
    _write_file(paths)
    folder = paths.settings_file.parent
    folder.chmod(0o555)
    try:
        yield paths, lambda: folder.chmod(0o755)
    finally:
        folder.chmod(0o755)


# --- order and speed ----------------------------------------------------------------------------------------
def test_rapid_saves_land_in_order_and_the_last_one_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """300 saves as fast as the UI can make them (each one tool more switched off) while a reader reads the
    file in a loop: every read is whole JSON, the number of switched-off tools never goes down between two
    reads (an older save never lands after a newer one), memory has each save at once, and the file ends
    with the last one. Every fsync ran on the writer thread, none on the saving one."""
    paths = app_paths(tmp_path / "home")
    _write_file(paths)
    store = SettingsStore.open(paths)
    store.write_behind()
    synced_on: set[str] = set()
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced_on.add(threading.current_thread().name.split("_")[0])
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    seen: list[int] = []
    bad: list[str] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            try:
                seen.append(len(_disabled(paths.settings_file)))
            except ValueError as exc:
                bad.append(str(exc))

    watcher = threading.Thread(target=reader)
    watcher.start()
    heard: list[int] = []
    store.subscribe(lambda c: heard.append(len(c.settings.tools.policy.disabled)), {"tools"})
    try:
        for i in range(300):
            store.update(lambda s, i=i: setattr(s.tools.policy, "disabled", [*s.tools.policy.disabled, f"t{i}"]))
            assert len(store.settings.tools.policy.disabled) == i + 2  # in use at once ("shouty" + i+1)
        assert store.flush() is None
    finally:
        stop.set()
        watcher.join()
    assert heard == list(range(2, 302))  # every save announced, in order, on the saving thread
    assert bad == [] and seen, "the reader saw half a file, or nothing"
    assert seen == sorted(seen), "an older save landed after a newer one"
    assert _disabled(paths.settings_file) == store.settings.tools.policy.disabled
    assert synced_on == {WRITER_THREAD}
    assert not store.unsaved and _temps(paths) == []


def test_exit_waits_for_the_write_on_its_way(tmp_path: Path) -> None:
    """A process that saves and exits at once (nobody calls flush: a crash of the quit path) still leaves
    the last save in the file: Python joins the writer thread before it ends."""
    home = tmp_path / "home"
    _write_file(app_paths(home))
    script = (
        "import sys\n"
        "from weclaw_desktop.paths import app_paths\n"
        "from weclaw_desktop.settings import SettingsStore\n"
        "store = SettingsStore.open(app_paths(sys.argv[1]))\n"
        "store.write_behind()\n"
        "for i in range(50):\n"
        "    store.update(lambda s, i=i: setattr(s.agent, 'max_rounds', 10 + i))\n"
        "print(store.unsaved)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-c", script, str(home)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    doc = json.loads(app_paths(home).settings_file.read_text(encoding="utf-8"))
    assert doc["agent"]["max_rounds"] == 59
    assert doc["mcp_servers"][0]["name"] == "time"  # the rest of the file as it was


# --- failures -----------------------------------------------------------------------------------------------
def test_a_full_disk_is_reported_and_loses_nothing(tiny_disk: AppPaths) -> None:
    """ENOSPC from a real full tmpfs: the report hears it, the old file is whole, no temp file is left,
    the change stays in use; once there is room, the flush (what quitting does) writes it and the report
    hears that it works again."""
    before = tiny_disk.settings_file.read_bytes()
    store = SettingsStore.open(tiny_disk)
    reports: list[OSError | None] = []
    store.write_behind(reports.append)
    change: SettingsChange = store.update(lambda s: setattr(s.tools.policy, "disabled", ["echo", "x" * 5000]))
    assert change.touches("tools")
    error = store.flush()
    assert isinstance(error, OSError) and error.errno == 28, error  # ENOSPC
    assert reports and {r.errno if r else None for r in reports} == {28}  # the flush may have tried once more
    assert tiny_disk.settings_file.read_bytes() == before
    assert _temps(tiny_disk) == [] and store.unsaved
    assert store.settings.tools.policy.disabled[0] == "echo"  # in use for this session
    (tiny_disk.settings_file.parents[2] / "filler").unlink()  # the user makes room
    assert store.flush() is None
    assert _disabled(tiny_disk.settings_file)[0] == "echo" and reports[-1] is None and not store.unsaved


def test_a_read_only_folder_is_reported_and_the_next_save_carries_everything(
    read_only_folder: tuple[AppPaths, Any],
) -> None:
    """Two saves that cannot be written (EROFS on a read-only mount, or EACCES): both stay in use, the old
    file is untouched; after the folder is writable again, the next save writes both changes."""
    paths, make_writable = read_only_folder
    before = paths.settings_file.read_bytes()
    store = SettingsStore.open(paths)
    reports: list[OSError | None] = []
    store.write_behind(reports.append)
    store.update(lambda s: setattr(s.agent, "max_rounds", 30))
    assert isinstance(store.flush(), OSError)
    store.update(lambda s: setattr(s.ui, "theme", "light"))
    assert isinstance(store.flush(), OSError) and len([r for r in reports if r is not None]) >= 2
    assert paths.settings_file.read_bytes() == before
    assert store.settings.agent.max_rounds == 30 and store.settings.ui.theme == "light"
    make_writable()
    store.update(lambda s: setattr(s.agent, "max_rounds", 31))
    assert store.flush() is None and reports[-1] is None
    doc = json.loads(paths.settings_file.read_text(encoding="utf-8"))
    assert doc["agent"]["max_rounds"] == 31 and doc["ui"]["theme"] == "light"


def test_synchronous_stores_still_raise(read_only_folder: tuple[AppPaths, Any]) -> None:
    """The CLI's store (no write-behind): the save raises, nothing changed in memory, the file is whole."""
    paths, _ = read_only_folder
    before = paths.settings_file.read_bytes()
    store = SettingsStore.open(paths)
    with pytest.raises(OSError):
        store.update(lambda s: setattr(s.agent, "max_rounds", 30))
    assert store.settings.agent.max_rounds == 9 and paths.settings_file.read_bytes() == before


async def test_the_window_tells_the_user_and_keeps_the_switch(
    qtbot: Any, tmp_path: Path, read_only_folder: tuple[AppPaths, Any], memory_keyring: Any
) -> None:
    """The GUI before any chat (the welcome panel fills the chat area): a tool switched off in a window whose
    settings folder is read-only. The switch is in use (the board says off), a banner above the chat
    names the file and why, the file is untouched. Once the folder is writable, Try again writes it: the
    banner goes and a notice says the settings were saved."""
    from uihelpers import close_windows, keep_loop, until

    from weclaw_desktop.i18n import set_language
    from weclaw_desktop.ui.boot import build_window

    keep_loop()
    set_language("en")
    paths, make_writable = read_only_folder
    before = paths.settings_file.read_bytes()
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)  # closing the window must not stop the test's loop
    window = build_window(SettingsStore.open(paths), tools_json=write_tools(tmp_path))
    window.show()
    banner = window.write_banner
    try:
        window.switch_tool("echo", False)
        assert window.board.state("echo") == "off"
        await until(banner.isVisible, what="the failed-save banner")
        assert "could not be saved" in banner.text.text() and str(paths.settings_file) in banner.text.text()
        assert window.stack.currentWidget() is not window.chat  # no chat to show a notice in: the banner
        window.switch_tool("shouty", True)  # fails again: still the one banner
        assert paths.settings_file.read_bytes() == before
        make_writable()
        banner.retry_button.click()
        await until(lambda: not banner.isVisible(), what="the banner to go")
        assert any("saved again" in str(n.message) for n in window.chat.notices())
        policy = json.loads(paths.settings_file.read_text(encoding="utf-8"))["tools"]["policy"]
        assert "echo" in policy["disabled"]
        assert policy == window.settings.tools.policy.model_dump(mode="json")  # both switches, as in use
    finally:
        await close_windows([window])
