"""Children of the frozen app get the user's environment back (PyInstaller's values never leak), simulated
from source: a fake bundle folder as ``sys._MEIPASS`` and the variables PyInstaller sets."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from weclaw_desktop import frozen
from weclaw_desktop.tools.safe_env import safe_env

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    internal = tmp_path / "weclaw" / "_internal"
    internal.mkdir(parents=True)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(internal), raising=False)
    monkeypatch.setattr(frozen, "initial_environ", lambda: None)
    yield internal


def pyinstaller_env(internal: Path, **user: str) -> dict[str, str]:
    """What the app's environment looks like after PyInstaller's bootloader and PySide6 hook ran."""
    env = {"HOME": "/home/u", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **user}
    if "LD_LIBRARY_PATH" in user:
        env["LD_LIBRARY_PATH_ORIG"] = user["LD_LIBRARY_PATH"]
        env["LD_LIBRARY_PATH"] = f"{internal}:{user['LD_LIBRARY_PATH']}"
    else:
        env["LD_LIBRARY_PATH"] = str(internal)
    env.update(
        {
            "_PYI_ARCHIVE_FILE": str(internal.parent / "weclaw"),
            "_PYI_PARENT_PROCESS_LEVEL": "1",
            "_PYI_LINUX_PROCESS_NAME": "weclaw",
            "QT_PLUGIN_PATH": str(internal / "PySide6" / "Qt" / "plugins"),
            "QML2_IMPORT_PATH": str(internal / "PySide6" / "Qt" / "qml"),
        }
    )
    return env


def test_the_users_values_come_back_and_pyinstallers_go(bundle: Path) -> None:
    """LD_LIBRARY_PATH from its _ORIG, _PYI_* and the bundle's Qt paths removed, the rest untouched."""
    env = pyinstaller_env(bundle, LD_LIBRARY_PATH="/opt/mylibs", MY_VAR="kept")
    out = frozen.original_environ(env, bundle=[str(bundle)])
    assert out["LD_LIBRARY_PATH"] == "/opt/mylibs"
    assert not [n for n in out if n.startswith("_PYI_") or n.endswith("_ORIG")]
    assert "QT_PLUGIN_PATH" not in out and "QML2_IMPORT_PATH" not in out
    assert out["MY_VAR"] == "kept" and out["PATH"] == "/usr/bin:/bin" and out["HOME"] == "/home/u"


def test_a_variable_pyinstaller_set_from_nothing_is_removed(bundle: Path) -> None:
    out = frozen.original_environ(pyinstaller_env(bundle), bundle=[str(bundle)])
    assert "LD_LIBRARY_PATH" not in out


def test_a_qt_path_the_session_set_comes_back_from_the_start_up_environment(bundle: Path) -> None:
    """The PySide6 hook overwrote the user's QT_PLUGIN_PATH; /proc/self/environ still has it."""
    env = pyinstaller_env(bundle)
    initial = {"QT_PLUGIN_PATH": "/usr/lib/qt6/plugins", "LD_LIBRARY_PATH": str(bundle)}
    out = frozen.original_environ(env, bundle=[str(bundle)], initial=initial)
    assert out["QT_PLUGIN_PATH"] == "/usr/lib/qt6/plugins"
    assert "LD_LIBRARY_PATH" not in out  # the start-up value was PyInstaller's only
    # also when the app itself had already dropped the bundle's value (restore_process_environ)
    env.pop("QT_PLUGIN_PATH")
    assert (
        frozen.original_environ(env, bundle=[str(bundle)], initial=initial)["QT_PLUGIN_PATH"] == "/usr/lib/qt6/plugins"
    )


def test_bundle_entries_leave_path_lists_and_the_rest_stays(bundle: Path) -> None:
    """Windows' PATH with the bundle prepended by the PySide6 hook: only that entry goes."""
    env = {"PATH": os.pathsep.join([str(bundle), "/usr/local/bin", str(bundle / "sub"), "/usr/bin"])}
    assert frozen.original_environ(env, bundle=[str(bundle)])["PATH"] == os.pathsep.join(["/usr/local/bin", "/usr/bin"])
    # a folder whose name merely starts like the bundle's is not inside it
    other = f"{bundle}-other"
    assert frozen.original_environ({"PATH": other}, bundle=[str(bundle)])["PATH"] == other


def test_from_source_nothing_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "frozen", False, raising=False)
    env = {"LD_LIBRARY_PATH": "/x", "LD_LIBRARY_PATH_ORIG": "/y", "_PYI_X": "1"}
    assert frozen.child_environ(env) == env


def test_safe_env_starts_from_the_original_environment(bundle: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shell and python_runner tools' environment: the user's, and still without secrets."""
    for name, value in pyinstaller_env(bundle, LD_LIBRARY_PATH="/opt/mylibs", GITHUB_TOKEN="t0ken").items():
        monkeypatch.setenv(name, value)
    env = safe_env()
    assert env["LD_LIBRARY_PATH"] == "/opt/mylibs"
    assert "GITHUB_TOKEN" not in env and "QT_PLUGIN_PATH" not in env
    assert not [n for n in env if n.startswith("_PYI_")]


def test_mcp_servers_get_the_users_path(bundle: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The MCP SDK copies PATH, HOME ... from the app: the connection hands it the user's values."""
    from mcp.client.stdio import get_default_environment

    monkeypatch.setenv("PATH", os.pathsep.join([str(bundle), "/usr/bin"]))
    env = frozen.child_environ(get_default_environment())
    assert env["PATH"] == "/usr/bin"


PROBE = r"""
import os, subprocess, sys
internal = sys.argv[1]
sys.frozen = True
sys._MEIPASS = internal
from weclaw_desktop import frozen
frozen.initial_environ = lambda: {"QT_PLUGIN_PATH": "/usr/lib/qt6/plugins"}
frozen.restore_process_environ()
print("PROCESS", os.environ.get("QT_PLUGIN_PATH", "unset"), os.environ.get("LD_LIBRARY_PATH", "unset"))
child = subprocess.run(["bash", "-c", "env"], capture_output=True, text=True).stdout  # plain inheritance
print("CHILD", " ".join(l for l in child.splitlines() if l.startswith(("_PYI", "LD_LIBRARY", "QT_PLUGIN", "QML"))))
from weclaw_desktop.tools.safe_env import safe_env
tool = subprocess.run(["bash", "-c", "env"], capture_output=True, text=True, env=safe_env()).stdout
print("TOOL", " ".join(l for l in tool.splitlines() if l.startswith(("_PYI", "LD_LIBRARY", "QT_PLUGIN", "QML"))))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the process itself is cleaned on Linux")
def test_the_frozen_process_cleans_its_own_environment_for_every_child(tmp_path: Path) -> None:
    """After start-up a child started by anyone (Qt's xdg-open, a library) inherits nothing of PyInstaller's;
    the process keeps no QT_PLUGIN_PATH (the bundled Qt must not load the system's plugins); the tools'
    children get the user's QT_PLUGIN_PATH back."""
    internal = tmp_path / "_internal"
    internal.mkdir()
    (internal / "resources").symlink_to(ROOT / "resources")  # the bundle's data (the i18n catalogues)
    (internal / "tools.json").symlink_to(ROOT / "tools.json")
    env = {**pyinstaller_env(internal, LD_LIBRARY_PATH="/opt/mylibs"), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(internal)], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split(" ", 1) if " " in line else (line, "") for line in proc.stdout.splitlines())
    assert lines["PROCESS"] == "unset /opt/mylibs"
    assert lines["CHILD"] == "LD_LIBRARY_PATH=/opt/mylibs"
    assert sorted(lines["TOOL"].split()) == ["LD_LIBRARY_PATH=/opt/mylibs", "QT_PLUGIN_PATH=/usr/lib/qt6/plugins"]


SUPERVISOR_PROBE = r"""
import os, subprocess, sys
internal = sys.argv[1]
sys.frozen = True
sys._MEIPASS = internal
from weclaw_desktop import frozen
frozen.initial_environ = lambda: {"QT_PLUGIN_PATH": "/usr/lib/qt6/plugins"}
frozen.restore_process_environ()  # what every frozen process does first
frozen.adopt_child_environ()  # what the tool supervisor (--child-guard) does next
child = subprocess.run(["bash", "-c", "env"], capture_output=True, text=True).stdout  # the command it execs
print(" ".join(sorted(l for l in child.splitlines() if l.startswith(("_PYI", "LD_LIBRARY", "QT_PLUGIN", "QML")))))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the process itself is cleaned on Linux")
def test_the_tool_supervisor_hands_the_user_s_qt_variables_to_the_command(tmp_path: Path) -> None:
    """The supervisor is the frozen app again (``--child-guard``): its own start-up drops the Qt variables for
    the bundled Qt, but the command it runs must get the user's QT_PLUGIN_PATH back, and nothing of
    PyInstaller's (the bundle's self-test checks the same with a real bundle)."""
    internal = tmp_path / "_internal"
    internal.mkdir()
    (internal / "resources").symlink_to(ROOT / "resources")
    (internal / "tools.json").symlink_to(ROOT / "tools.json")
    env = {**pyinstaller_env(internal, LD_LIBRARY_PATH="/opt/mylibs"), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", SUPERVISOR_PROBE, str(internal)], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["LD_LIBRARY_PATH=/opt/mylibs", "QT_PLUGIN_PATH=/usr/lib/qt6/plugins"]
