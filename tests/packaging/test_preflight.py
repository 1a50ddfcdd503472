"""Before Qt starts: no display, missing OpenGL/X11 libraries, no fonts, no time zone database. Each gives
one clear message (naming Debian/Ubuntu and Fedora packages) instead of Qt's abort or a traceback, and
``weclaw doctor`` reports the same. Bare systems are simulated: no display variables, an empty library
search path for the real Qt files, a fontconfig configuration without fonts, a TZPATH without zones."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from weclaw_desktop import preflight
from weclaw_desktop.preflight import libs
from weclaw_desktop.preflight.display import platform_candidates

ROOT = Path(__file__).resolve().parents[2]
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the preflight checks Linux")


def bare_env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "XDG_SESSION_TYPE")
    }
    return {**env, "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8", **extra}


def weclaw(*args: str, env: dict[str, str], tmp: Path) -> subprocess.CompletedProcess[str]:
    env = {**env, "WECLAW_HOME": str(tmp / "home")}
    return subprocess.run(
        [sys.executable, "-m", "weclaw_desktop", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


@linux
def test_no_display_is_one_line_saying_what_to_do(tmp_path: Path) -> None:
    """`weclaw` on a server: exit 1 (not Qt's abort, 134), the way out named, no traceback, Qt never loaded."""
    proc = weclaw(env=bare_env(), tmp=tmp_path)
    assert proc.returncode == 1
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert "no display" in lines[0] and "`weclaw chat`" in lines[0] and "Traceback" not in proc.stderr
    assert "could not load the Qt platform plugin" not in proc.stderr


@linux
def test_the_message_follows_a_chinese_locale(tmp_path: Path) -> None:
    proc = weclaw(env=bare_env(LANG="zh_CN.UTF-8", LC_ALL="zh_CN.UTF-8"), tmp=tmp_path)
    assert proc.returncode == 1 and "无法打开窗口" in proc.stderr and "weclaw chat" in proc.stderr


@linux
def test_a_display_that_does_not_answer(tmp_path: Path) -> None:
    proc = weclaw(env=bare_env(DISPLAY=":93"), tmp=tmp_path)
    assert proc.returncode == 1 and "cannot open the X display ':93'" in proc.stderr


@linux
@pytest.mark.skipif(shutil.which("Xvfb") is None, reason="needs Xvfb")
def test_a_real_x_display_passes(tmp_path: Path) -> None:
    """A display that is there passes (Xvfb picks a free display itself and says which, so parallel runs and a
    slow start on a loaded machine cannot make it fail)."""
    read_fd, write_fd = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_fd), "-nolisten", "tcp"],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    try:
        with os.fdopen(read_fd, "rb") as pipe:
            number = pipe.readline().strip().decode()  # written once the server accepts connections
        assert number.isdigit(), "Xvfb did not start"
        env = bare_env(DISPLAY=f":{number}")
        assert preflight.gui_problem(env) is None
        chosen, problem = preflight.display_problem(env)
        assert chosen == "xcb" and problem is None
    finally:
        server.terminate()
        server.wait(10)


def test_platform_candidates_follow_qt() -> None:
    assert platform_candidates({"QT_QPA_PLATFORM": "wayland;xcb"}) == ["wayland", "xcb"]
    assert platform_candidates({"XDG_SESSION_TYPE": "wayland", "WAYLAND_DISPLAY": "wayland-0"}) == ["wayland", "xcb"]
    assert platform_candidates({"DISPLAY": ":0"}) == ["xcb"]
    assert platform_candidates({"QT_QPA_PLATFORM": "offscreen"}) == ["offscreen"]


@linux
def test_missing_opengl_names_the_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real Qt files, on a simulated machine whose library folders hold nothing: every system library
    they need is reported, OpenGL/EGL among them, with apt and dnf package names."""
    qt = libs.qt_dir()
    if qt is None:
        pytest.skip("PySide6 is not installed as a wheel here")
    monkeypatch.setattr(libs, "dlopen_error", lambda path: "libGL.so.1: cannot open shared object file")
    monkeypatch.setattr(libs, "ld_cache", lambda path="": {})
    monkeypatch.setattr(libs, "_DEFAULT_DIRS", ())
    monkeypatch.setattr(libs, "_multiarch_dirs", lambda: ())
    monkeypatch.setattr(libs, "startup_library_path", lambda environ=None: [])
    problem = preflight.qt_library_problem("xcb")
    assert problem is not None and problem.kind == "libraries"
    assert "libGL.so.1" in problem.missing and "libEGL.so.1" in problem.missing
    assert "sudo apt install" in problem.text and "libgl1" in problem.text and "libegl1" in problem.text
    assert "sudo dnf install" in problem.text and "mesa-libGL" in problem.text and "mesa-libEGL" in problem.text
    assert "libc.so.6" in problem.missing  # nothing at all was found: the walk really resolved names


@linux
def test_nothing_is_missing_on_this_machine() -> None:
    qt = libs.qt_dir()
    if qt is None:
        pytest.skip("PySide6 is not installed as a wheel here")
    assert (
        libs.missing_libraries([qt / "lib" / "libQt6Gui.so.6", qt / "plugins" / "platforms" / "libqoffscreen.so"]) == []
    )
    assert preflight.qt_library_problem("offscreen") is None


NO_FONTS_PROBE = """
from weclaw_desktop.preflight import font_problem
from weclaw_desktop.preflight.fonts import font_report
p = font_problem()
print(font_report().count, p.kind if p else None)
print(p.text if p else "")
"""


@linux
def test_no_fonts_is_a_message_with_packages(tmp_path: Path) -> None:
    """fontconfig with a configuration that lists no font folder: as on a machine without fonts."""
    conf = tmp_path / "fonts.conf"
    conf.write_text(
        '<?xml version="1.0"?><fontconfig><cachedir>' + str(tmp_path / "cache") + "</cachedir></fontconfig>",
        encoding="utf-8",
    )
    env = {**bare_env(), "FONTCONFIG_FILE": str(conf)}
    proc = subprocess.run(
        [sys.executable, "-c", NO_FONTS_PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    first, text = proc.stdout.splitlines()[:2]
    assert first == "0 fonts"
    assert "no fonts are installed" in text and "fonts-noto-core" in text and "google-noto-sans-fonts" in text
    # and the GUI entry point stops there with that message (offscreen: no display needed)
    gui = weclaw(env={**env, "QT_QPA_PLATFORM": "offscreen"}, tmp=tmp_path)
    assert gui.returncode == 1 and "no fonts are installed" in gui.stderr


TZ_PROBE = """
from weclaw_desktop.preflight.tz import zone_database
from weclaw_desktop.tools.timeparse import resolve_zone
db = zone_database()
print(db.source, resolve_zone("Asia/Shanghai").key)
print(db.text)
"""


def test_no_system_time_zones_falls_back_to_the_bundled_tzdata(tmp_path: Path) -> None:
    """PYTHONTZPATH pointing at an empty folder: zoneinfo finds no system database, tzdata serves it."""
    env = {**bare_env(), "PYTHONTZPATH": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-c", TZ_PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    first, text = proc.stdout.splitlines()[:2]
    assert first == "bundled Asia/Shanghai"
    assert "using the tzdata package shipped with WeClaw" in text


@linux
def test_doctor_reports_the_same_checks_for_real(tmp_path: Path) -> None:
    proc = weclaw("doctor", "--json", env=bare_env(), tmp=tmp_path)
    checks = {c["name"]: c for c in json.loads(proc.stdout)}
    assert checks["display"]["level"] == "fail" and "no display" in checks["display"]["detail"]
    assert checks["qt libs"]["level"] == "ok"
    assert checks["fonts"]["level"] in ("ok", "warn")
    assert checks["qt"]["level"] == "fail"  # the real start is not even tried without a display
    assert checks["timezones"]["level"] == "ok" and checks["tls"]["level"] == "ok"
    assert proc.returncode == 1
