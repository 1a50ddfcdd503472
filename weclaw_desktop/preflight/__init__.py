"""Can the window open here? Checked before the first PySide6 import, so a bare machine gets one clear
message instead of Qt's abort ("could not load the Qt platform plugin", exit 134) or a traceback.

Linux only (elsewhere Qt brings what it needs): the Qt libraries and the platform plugin load (OpenGL/EGL,
X11 or Wayland client libraries; missing ones are named with their Debian/Ubuntu and Fedora packages), a
display answers (X11 or Wayland, as Qt will pick), and fontconfig knows at least one font. ``weclaw doctor``
reports the same checks one by one (:func:`platform_report`).

    problem = gui_problem()           # None, or a Problem with .text in the user's language
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field

from weclaw_desktop.preflight import display, libs
from weclaw_desktop.preflight.messages import say


@dataclass
class Problem:
    """Why the window cannot open, and what to do."""

    kind: str  # "display", "libraries", "fonts"
    text: str
    missing: list[str] = field(default_factory=list)


@dataclass
class PlatformCheck:
    name: str
    ok: bool
    detail: str
    warn: bool = False


def _applies(platform: str = sys.platform) -> bool:
    return platform.startswith("linux")


def qt_library_problem(platform_name: str = "offscreen") -> Problem | None:
    """None if Qt's libraries and the ``platform_name`` plugin load here; else the libraries that are missing."""
    if not _applies():
        return None
    qt = libs.qt_dir()
    if qt is None:
        return None  # not a PySide6 wheel layout: let the import say what is wrong
    files = [qt / rel for rel in (*libs.CORE_LIBRARIES, *libs.PLATFORM_PLUGINS.get(platform_name, ()))]
    errors = [err for f in files if f.exists() and (err := libs.dlopen_error(f))]
    if not errors:
        return None
    missing = libs.missing_libraries(files)
    if not missing:  # present but unusable (a wrong architecture, a too-old glibc ...): show the loader's words
        return Problem("libraries", say("libs_broken", error=errors[0]))
    deb, rpm, unknown = libs.packages_for(missing)
    what = ", ".join(dict.fromkeys(m.what for m in missing))
    names = ", ".join(m.soname for m in missing)
    text = say("libs_missing", what=what, names=names, deb=" ".join(deb) or "-", rpm=" ".join(rpm) or "-")
    if unknown:
        text += " " + say("libs_unknown", names=", ".join(unknown))
    return Problem("libraries", text, [m.soname for m in missing])


def display_problem(environ: Mapping[str, str] | None = None) -> tuple[str | None, Problem | None]:
    """(the platform plugin that will work, None) or (None, why no candidate works)."""
    env = os.environ if environ is None else environ
    reasons: list[str] = []
    lib_problem: Problem | None = None
    for name in display.platform_candidates(env):
        problem = qt_library_problem(name)
        if problem is not None:
            lib_problem = lib_problem or problem
            reasons.append(f"{name}: {problem.text}")
            continue
        error = display.display_error(name, env)
        if error is None:
            return name, None
        reasons.append(f"{name}: {error}")
    if lib_problem is not None:
        return None, lib_problem
    if not display.has_display_variables(env) and not env.get("QT_QPA_PLATFORM"):
        return None, Problem("display", say("no_display"))
    return None, Problem("display", say("display_unreachable", details="; ".join(reasons)))


def font_problem() -> Problem | None:
    from weclaw_desktop.preflight.fonts import font_report

    report = font_report(cjk=False)
    if report.count:
        return None
    if report.error:
        return Problem("libraries", say("fonts_unchecked", error=report.error))
    return Problem("fonts", say("no_fonts"))


def gui_problem(environ: Mapping[str, str] | None = None) -> Problem | None:
    """Everything the desktop window needs here; None when it can open."""
    if not _applies():
        return None
    _platform, problem = display_problem(environ)
    return problem or font_problem()


def cjk_warning(language: str) -> str | None:
    """A note when the UI is Chinese and no font covers Chinese (the window still opens)."""
    if not _applies() or not language.lower().startswith("zh"):
        return None
    from weclaw_desktop.preflight.fonts import font_report

    report = font_report()
    return None if report.has_cjk or not report.count else say("no_cjk")


def platform_report(environ: Mapping[str, str] | None = None) -> list[PlatformCheck]:
    """``weclaw doctor``: display, Qt libraries, fonts, one line each (Linux; elsewhere nothing to check)."""
    if not _applies():
        return []
    env = os.environ if environ is None else environ
    out: list[PlatformCheck] = []
    core = qt_library_problem("offscreen")
    out.append(
        PlatformCheck("qt libs", core is None, "Qt, OpenGL/EGL and fontconfig load" if core is None else core.text)
    )
    chosen, problem = display_problem(env)
    if chosen is not None:
        out.append(PlatformCheck("display", True, f"{chosen} ({_display_name(chosen, env)}) opens"))
    elif problem is not None and (core is None or problem.kind != "libraries"):
        out.append(PlatformCheck("display", False, problem.text))
    from weclaw_desktop.preflight.fonts import font_report

    fonts = font_report()
    if not fonts.count:
        out.append(
            PlatformCheck("fonts", False, say("fonts_unchecked", error=fonts.error) if fonts.error else say("no_fonts"))
        )
    elif not fonts.has_cjk:
        out.append(PlatformCheck("fonts", True, f"{fonts.count} fonts; " + say("no_cjk"), warn=True))
    else:
        out.append(PlatformCheck("fonts", True, f"{fonts.count} fonts; Chinese: {fonts.cjk_families[0]}"))
    return out


def _display_name(platform_name: str, env: Mapping[str, str]) -> str:
    if platform_name == "xcb":
        return f"DISPLAY={env.get('DISPLAY', '')}"
    if platform_name.startswith("wayland"):
        return f"WAYLAND_DISPLAY={env.get('WAYLAND_DISPLAY', '') or 'wayland-0'}"
    return "no screen needed"
