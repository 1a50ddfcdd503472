"""Is there a display Qt can open? Tested for real: ``XOpenDisplay`` and ``wl_display_connect``, as Qt does.

Which platform plugins Qt will try, in order (:func:`platform_candidates`): ``QT_QPA_PLATFORM`` when set
(``wayland;xcb`` lists fallbacks), else Wayland first in a Wayland session and X11 (``xcb``) after it.
Platforms without a screen (``offscreen``, ``minimal``, ``vnc`` ...) need no display.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Mapping

#: Platform plugins that draw to no screen of this machine (nothing to connect to).
HEADLESS = frozenset({"offscreen", "minimal", "vnc", "minimalegl", "linuxfb", "eglfs", "vkkhrdisplay"})
CONNECT_TIMEOUT_S = 5.0


def platform_candidates(environ: Mapping[str, str]) -> list[str]:
    """The platform plugins Qt will try here, in order."""
    chosen = environ.get("QT_QPA_PLATFORM", "").strip()
    if chosen:
        return [name.split(":", 1)[0].strip().lower() for name in chosen.split(";") if name.strip()]
    session = environ.get("XDG_SESSION_TYPE", "").lower()
    if session == "wayland" or (environ.get("WAYLAND_DISPLAY") and session != "x11"):
        return ["wayland", "xcb"]
    return ["xcb"]


def _call_with_timeout(fn: ctypes._CFuncPtr, arg: bytes | None, timeout: float) -> int | None:  # type: ignore[name-defined]
    """``fn(arg)`` in a thread: a display on a dead network address must not hang the start."""
    result: list[int | None] = []

    def run() -> None:
        result.append(fn(arg))

    worker = threading.Thread(target=run, daemon=True, name="display-probe")
    worker.start()
    worker.join(timeout)
    return result[0] if result else None


def x11_error(environ: Mapping[str, str], *, timeout: float = CONNECT_TIMEOUT_S) -> str | None:
    """None if the X display opens (``XOpenDisplay``, with the user's authorisation), else why not."""
    display = environ.get("DISPLAY", "")
    if not display:
        return "DISPLAY is not set"
    try:
        lib = ctypes.CDLL("libX11.so.6")
    except OSError as exc:
        return f"libX11 cannot be loaded ({exc})"
    lib.XOpenDisplay.restype = ctypes.c_void_p
    lib.XOpenDisplay.argtypes = [ctypes.c_char_p]
    lib.XCloseDisplay.argtypes = [ctypes.c_void_p]
    handle = _call_with_timeout(lib.XOpenDisplay, os.fsencode(display), timeout)
    if not handle:
        return f"cannot open the X display {display!r}"
    lib.XCloseDisplay(handle)
    return None


def wayland_error(environ: Mapping[str, str], *, timeout: float = CONNECT_TIMEOUT_S) -> str | None:
    """None if the Wayland compositor answers (``wl_display_connect``), else why not."""
    name = environ.get("WAYLAND_DISPLAY", "") or "wayland-0"
    runtime = environ.get("XDG_RUNTIME_DIR", "")
    if not os.path.isabs(name) and not runtime:
        return "XDG_RUNTIME_DIR is not set"
    socket_path = name if os.path.isabs(name) else os.path.join(runtime, name)
    if not os.path.exists(socket_path):
        return f"no Wayland compositor at {socket_path}"
    try:
        lib = ctypes.CDLL("libwayland-client.so.0")
    except OSError as exc:
        return f"libwayland-client cannot be loaded ({exc})"
    lib.wl_display_connect.restype = ctypes.c_void_p
    lib.wl_display_connect.argtypes = [ctypes.c_char_p]
    lib.wl_display_disconnect.argtypes = [ctypes.c_void_p]
    handle = _call_with_timeout(lib.wl_display_connect, os.fsencode(socket_path), timeout)
    if not handle:
        return f"the Wayland compositor at {socket_path} refused the connection"
    lib.wl_display_disconnect(handle)
    return None


def display_error(platform_name: str, environ: Mapping[str, str]) -> str | None:
    """None if ``platform_name`` has a display to open (or needs none), else why not."""
    if platform_name in HEADLESS:
        return None
    if platform_name == "xcb":
        return x11_error(environ)
    if platform_name == "wayland" or platform_name.startswith("wayland-"):
        return wayland_error(environ)
    return None  # a plugin this check does not know: let Qt try


def has_display_variables(environ: Mapping[str, str]) -> bool:
    return bool(environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"))
