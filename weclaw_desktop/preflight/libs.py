"""Which shared libraries Qt needs here, which of them this machine lacks, and which packages provide them.

The quick test is the real one: ``dlopen`` the Qt library or platform plugin the app is about to use, as Qt
would. Only when that fails are the ``DT_NEEDED`` trees walked (:func:`missing_libraries`), resolving each
name the way the dynamic loader does (RPATH, ``LD_LIBRARY_PATH`` at start-up, RUNPATH, ``/etc/ld.so.cache``,
the default folders), so that the message names every missing library at once, not just the first.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import platform
import struct
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from weclaw_desktop.elf import read_elf

#: soname -> (what it is, Debian/Ubuntu package, Fedora/RHEL package). Data, not code: add a row.
PACKAGES: dict[str, tuple[str, str, str]] = {
    "libGL.so.1": ("OpenGL", "libgl1", "mesa-libGL"),
    "libEGL.so.1": ("EGL", "libegl1", "mesa-libEGL"),
    "libOpenGL.so.0": ("OpenGL", "libopengl0", "libglvnd-opengl"),
    "libGLX.so.0": ("OpenGL (GLX)", "libglx0", "libglvnd-glx"),
    "libfontconfig.so.1": ("fontconfig", "libfontconfig1", "fontconfig"),
    "libfreetype.so.6": ("FreeType", "libfreetype6", "freetype"),
    "libxkbcommon.so.0": ("xkbcommon", "libxkbcommon0", "libxkbcommon"),
    "libxkbcommon-x11.so.0": ("xkbcommon (X11)", "libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libX11.so.6": ("X11", "libx11-6", "libX11"),
    "libX11-xcb.so.1": ("X11 (xcb)", "libx11-xcb1", "libX11-xcb"),
    "libxcb.so.1": ("X11 (xcb)", "libxcb1", "libxcb"),
    "libxcb-cursor.so.0": ("X11 (xcb-cursor)", "libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("X11 (xcb-icccm)", "libxcb-icccm4", "xcb-util-wm"),
    "libxcb-image.so.0": ("X11 (xcb-image)", "libxcb-image0", "xcb-util-image"),
    "libxcb-keysyms.so.1": ("X11 (xcb-keysyms)", "libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-render-util.so.0": ("X11 (xcb-render-util)", "libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-util.so.1": ("X11 (xcb-util)", "libxcb-util1", "xcb-util"),
    "libxcb-randr.so.0": ("X11 (xcb-randr)", "libxcb-randr0", "libxcb"),
    "libxcb-render.so.0": ("X11 (xcb-render)", "libxcb-render0", "libxcb"),
    "libxcb-shape.so.0": ("X11 (xcb-shape)", "libxcb-shape0", "libxcb"),
    "libxcb-shm.so.0": ("X11 (xcb-shm)", "libxcb-shm0", "libxcb"),
    "libxcb-sync.so.1": ("X11 (xcb-sync)", "libxcb-sync1", "libxcb"),
    "libxcb-xfixes.so.0": ("X11 (xcb-xfixes)", "libxcb-xfixes0", "libxcb"),
    "libxcb-xkb.so.1": ("X11 (xcb-xkb)", "libxcb-xkb1", "libxcb"),
    "libxcb-glx.so.0": ("X11 (xcb-glx)", "libxcb-glx0", "libxcb"),
    "libxcb-xinput.so.0": ("X11 (xcb-xinput)", "libxcb-xinput0", "libxcb"),
    "libSM.so.6": ("X11 (SM)", "libsm6", "libSM"),
    "libICE.so.6": ("X11 (ICE)", "libice6", "libICE"),
    "libwayland-client.so.0": ("Wayland", "libwayland-client0", "libwayland-client"),
    "libwayland-cursor.so.0": ("Wayland (cursor)", "libwayland-cursor0", "libwayland-cursor"),
    "libwayland-egl.so.1": ("Wayland (EGL)", "libwayland-egl1", "libwayland-egl"),
    "libdbus-1.so.3": ("D-Bus", "libdbus-1-3", "dbus-libs"),
    "libglib-2.0.so.0": ("GLib", "libglib2.0-0", "glib2"),
    "libgthread-2.0.so.0": ("GLib", "libglib2.0-0", "glib2"),
    "libgobject-2.0.so.0": ("GLib", "libglib2.0-0", "glib2"),
    "libstdc++.so.6": ("the C++ runtime", "libstdc++6", "libstdc++"),
    "libgcc_s.so.1": ("the GCC runtime", "libgcc-s1", "libgcc"),
    "libexpat.so.1": ("expat", "libexpat1", "expat"),
    "libz.so.1": ("zlib", "zlib1g", "zlib"),
    "libpng16.so.16": ("libpng", "libpng16-16", "libpng"),
}

#: Qt platform plugin -> the plugin file and the extra plugins it loads at once.
PLATFORM_PLUGINS: dict[str, tuple[str, ...]] = {
    "xcb": ("platforms/libqxcb.so",),
    "wayland": ("platforms/libqwayland.so", "wayland-shell-integration/libxdg-shell.so"),
    "offscreen": ("platforms/libqoffscreen.so",),
    "minimal": ("platforms/libqminimal.so",),
}
#: What every window needs, whatever the platform (QtGui links OpenGL/EGL, fontconfig, xkbcommon...).
CORE_LIBRARIES = ("lib/libQt6Gui.so.6", "lib/libQt6Widgets.so.6")


@dataclass(frozen=True)
class Missing:
    soname: str
    needed_by: str

    @property
    def what(self) -> str:
        return PACKAGES.get(self.soname, (self.soname, "", ""))[0]


def qt_dir() -> Path | None:
    """PySide6's Qt folder (``lib/``, ``plugins/``): inside the bundle when frozen, else the installed wheel's."""
    meipass = getattr(sys, "_MEIPASS", None)
    if getattr(sys, "frozen", False) and meipass:
        candidate = Path(meipass) / "PySide6" / "Qt"
        return candidate if candidate.is_dir() else None
    try:
        spec = importlib.util.find_spec("PySide6")
    except (ImportError, ValueError):
        return None
    for location in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(location) / "Qt"
        if candidate.is_dir():
            return candidate
    return None


def dlopen_error(path: Path) -> str | None:
    """Load ``path`` as Qt would; None if it loads, else the loader's message."""
    try:
        ctypes.CDLL(str(path), mode=getattr(os, "RTLD_LAZY", 1) | getattr(os, "RTLD_LOCAL", 0))
    except OSError as exc:
        return str(exc)
    return None


def packages_for(missing: Iterable[Missing]) -> tuple[list[str], list[str], list[str]]:
    """(Debian/Ubuntu packages, Fedora packages, sonames with no known package), each without duplicates."""
    deb: list[str] = []
    rpm: list[str] = []
    unknown: list[str] = []
    for item in missing:
        row = PACKAGES.get(item.soname)
        if row is None:
            if item.soname not in unknown:
                unknown.append(item.soname)
            continue
        for target, name in ((deb, row[1]), (rpm, row[2])):
            if name not in target:
                target.append(name)
    return deb, rpm, unknown


# --- resolving names as the dynamic loader does ------------------------------------------------------

_ARCH_FLAGS = {"x86_64": 0x0300, "amd64": 0x0300, "aarch64": 0x0A00, "arm64": 0x0A00}
_DEFAULT_DIRS = ("/lib64", "/usr/lib64", "/lib", "/usr/lib")


def _multiarch_dirs() -> tuple[str, ...]:
    machine = platform.machine().lower()
    triplet = {"x86_64": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu"}.get(machine)
    return (f"/lib/{triplet}", f"/usr/lib/{triplet}") if triplet else ()


@cache
def ld_cache(path: str = "/etc/ld.so.cache") -> dict[str, str]:
    """soname -> path from glibc's loader cache (the ``glibc-ld.so.cache1.1`` format), this machine's arch."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return {}
    magic = b"glibc-ld.so.cache1.1"
    start = data.find(magic)
    if start < 0:
        return {}
    want = _ARCH_FLAGS.get(platform.machine().lower())
    out: dict[str, str] = {}
    try:
        (count,) = struct.unpack_from("<I", data, start + 20)
        for i in range(count):
            flags, key, value = struct.unpack_from("<iII", data, start + 48 + i * 24)
            if want is not None and flags & 0xFF00 != want:
                continue
            name = data[start + key : data.index(b"\0", start + key)].decode("utf-8", "replace")
            target = data[start + value : data.index(b"\0", start + value)].decode("utf-8", "replace")
            out.setdefault(name, target)
    except (struct.error, ValueError):
        return out
    return out


def _expand(entries: str | None, origin: Path) -> list[str]:
    if not entries:
        return []
    return [e.replace("${ORIGIN}", str(origin)).replace("$ORIGIN", str(origin)) for e in entries.split(":") if e]


def startup_library_path(environ: Mapping[str, str] | None = None) -> list[str]:
    """``LD_LIBRARY_PATH`` as the loader saw it at start-up (the bundle's, also after frozen.py restored it)."""
    from weclaw_desktop.frozen import bundle_dirs, initial_environ

    initial = initial_environ() if environ is None else environ
    value = (initial or os.environ).get("LD_LIBRARY_PATH", "")
    return [*bundle_dirs(), *(p for p in value.split(":") if p)]


def resolve(name: str, loader: Path, rpath: str | None, runpath: str | None, search: list[str]) -> Path | None:
    """Where the dynamic loader would find ``name`` for the object at ``loader``; None if nowhere."""
    if "/" in name:
        return Path(name) if Path(name).is_file() else None
    origin = loader.parent
    dirs = [] if runpath else _expand(rpath, origin)
    dirs += search + _expand(runpath, origin)
    for folder in dirs:
        candidate = Path(folder) / name
        if candidate.is_file():
            return candidate
    cached = ld_cache().get(name)
    if cached and Path(cached).is_file():
        return Path(cached)
    for folder in (*_multiarch_dirs(), *_DEFAULT_DIRS):
        candidate = Path(folder) / name
        if candidate.is_file():
            return candidate
    return None


def missing_libraries(roots: Iterable[Path], search: list[str] | None = None) -> list[Missing]:
    """Every library the ``roots`` need (directly or through other libraries) that cannot be found."""
    search = startup_library_path() if search is None else search
    missing: dict[str, Missing] = {}
    seen: set[str] = set()
    stack = [p for p in roots if p.is_file()]
    while stack:
        path = stack.pop()
        key = os.path.realpath(path)
        if key in seen:
            continue
        seen.add(key)
        info = read_elf(path)
        if info is None:
            continue
        for name in info.needed:
            found = resolve(name, path, info.rpath, info.runpath, search)
            if found is None:
                missing.setdefault(name, Missing(name, path.name))
            else:
                stack.append(found)
    return list(missing.values())
