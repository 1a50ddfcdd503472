"""What differs when WeClaw runs from the PyInstaller bundle: the start-up steps and the child environment.

PyInstaller changes the environment of the app so that it finds its own libraries: the bootloader sets
``LD_LIBRARY_PATH`` (keeping the user's value as ``LD_LIBRARY_PATH_ORIG``) and ``_PYI_*`` bookkeeping
variables; the PySide6 run-time hook sets ``QT_PLUGIN_PATH`` and ``QML2_IMPORT_PATH`` into the bundle
(and prepends the bundle to ``PATH`` on Windows, ``DYLD_LIBRARY_PATH`` on macOS). A child process that
inherits them loads the bundle's libtinfo, libssl, libz... or Qt plugins of the wrong Qt version, instead of
its own: bash, ssh, git, a browser started by ``xdg-open`` or a Qt program can break.

:func:`original_environ` computes the user's environment from the app's: every ``NAME_ORIG`` put back as
``NAME``, the ``_PYI_*`` variables dropped, and bundle folders removed from the path variables PyInstaller
and its hooks change (a variable that only pointed into the bundle is removed). On Linux the process's
start-up environment (``/proc/self/environ``, before the Python hooks ran) supplies, for children, a value
the PySide6 hook overwrote, e.g. a ``QT_PLUGIN_PATH`` the user's session sets.

:func:`startup` runs first thing in the frozen app (``weclaw_desktop/__main__.py``): multiprocessing's
``freeze_support()`` (a spawned worker or resource tracker runs here and exits), then, on Linux, the
process's own ``os.environ`` is replaced by the original (but the Qt variables: see :data:`QT_OWN_VARS`), so
that children started by anything (Qt's ``xdg-open``, the MCP SDK, libraries) inherit a clean environment. That is safe on Linux because the dynamic
loader reads ``LD_LIBRARY_PATH`` once at process start and Qt finds its plugins through PySide6's
``qt.conf``. On Windows and macOS the process keeps PyInstaller's values (Windows searches ``PATH`` for DLLs
at load time) and :func:`child_environ` gives each child the original; ``tools/safe_env.py`` and the MCP
connection use it.

Nothing here imports more than the standard library: it runs before anything else.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

#: Variables PyInstaller's bootloader or run-time hooks point into the bundle (path lists).
BUNDLE_PATH_VARS = (
    "LD_LIBRARY_PATH",
    "LIBPATH",
    "DYLD_LIBRARY_PATH",
    "DYLD_FRAMEWORK_PATH",
    "PATH",
    "QT_PLUGIN_PATH",
    "QML2_IMPORT_PATH",
    "QML_IMPORT_PATH",
    "QT_QPA_PLATFORM_PLUGIN_PATH",
    "QTWEBENGINEPROCESS_PATH",
    "GI_TYPELIB_PATH",
    "GIO_MODULE_DIR",
    "GDK_PIXBUF_MODULE_FILE",
    "FONTCONFIG_FILE",
    "FONTCONFIG_PATH",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "TCL_LIBRARY",
    "TK_LIBRARY",
)
PYI_PREFIX = "_PYI_"
ORIG_SUFFIX = "_ORIG"


def is_frozen() -> bool:
    return bool(getattr(sys, "frozen", False))


def bundle_dirs() -> list[str]:
    """The bundle's library folder (``sys._MEIPASS``) when frozen, else [].

    Only that folder: the executable's own folder may be on the user's ``PATH`` on purpose.
    """
    meipass = getattr(sys, "_MEIPASS", None) if is_frozen() else None
    return [os.path.abspath(meipass)] if meipass else []


def _inside(entry: str, dirs: list[str]) -> bool:
    if not entry:
        return False
    path = os.path.normcase(os.path.abspath(entry))
    for folder in dirs:
        base = os.path.normcase(folder)
        if path == base or path.startswith(base.rstrip(os.sep) + os.sep):
            return True
    return False


def _without_bundle(value: str, dirs: list[str]) -> str:
    kept = [entry for entry in value.split(os.pathsep) if not _inside(entry, dirs)]
    return os.pathsep.join(kept)


def original_environ(
    environ: Mapping[str, str],
    *,
    bundle: list[str],
    initial: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment the user started the bundle with, recovered from the app's ``environ``.

    ``bundle``: the bundle's folders (entries inside them are PyInstaller's). ``initial``: the process's
    start-up environment where the platform shows it (Linux ``/proc/self/environ``), used for a path variable
    a run-time hook overwrote. Variables the app itself set or removed since (secrets taken out of the
    environment) stay as ``environ`` has them.
    """
    env = dict(environ)
    for name in [n for n in env if n.startswith(PYI_PREFIX)]:
        del env[name]
    for name in [n for n in env if n.endswith(ORIG_SUFFIX) and len(n) > len(ORIG_SUFFIX)]:
        env[name[: -len(ORIG_SUFFIX)]] = env.pop(name)
        # an _ORIG value is the user's own: keep it exactly, even if it names a bundle folder
    restored = {n[: -len(ORIG_SUFFIX)] for n in environ if n.endswith(ORIG_SUFFIX)}
    if not bundle:
        return env
    for name in BUNDLE_PATH_VARS:
        if name in restored:
            continue
        current = env.get(name)
        cleaned = _without_bundle(current, bundle) if current is not None else ""
        if current is not None and cleaned == current:
            continue  # untouched by PyInstaller
        before = (initial or {}).get(name)
        if before is not None and not cleaned:
            cleaned = _without_bundle(before, bundle)  # the user's value, overwritten by a run-time hook
        if cleaned:
            env[name] = cleaned
        else:
            env.pop(name, None)
    return env


def initial_environ() -> dict[str, str] | None:
    """The environment this process was started with (Linux), or None where the platform does not show it."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        raw = Path("/proc/self/environ").read_bytes()
    except OSError:
        return None
    out: dict[str, str] = {}
    for item in raw.split(b"\0"):
        name, sep, value = item.partition(b"=")
        if sep and name:
            out[os.fsdecode(name)] = os.fsdecode(value)
    return out


@dataclass
class Restored:
    """What :func:`startup` changed in the app's own environment (for the self-test and diagnostics)."""

    applied: bool = False
    restored: dict[str, str] = field(default_factory=dict)  # name -> the user's value put back
    removed: list[str] = field(default_factory=list)  # names dropped


#: Filled by :func:`restore_process_environ`.
RESTORED = Restored()


def child_environ(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a child process: the user's original when frozen, else a copy of ``base``."""
    source = os.environ if base is None else base
    dirs = bundle_dirs()
    if not dirs:
        return dict(source)
    return original_environ(source, bundle=dirs, initial=initial_environ())


#: Qt reads these in this process too: a user's value (the system Qt's plugins) must not reach the bundled Qt,
#: which then finds its plugins through PySide6's qt.conf. The process drops the bundle's value; children
#: get the user's back from :func:`child_environ`.
QT_OWN_VARS = ("QT_PLUGIN_PATH", "QML2_IMPORT_PATH", "QML_IMPORT_PATH", "QT_QPA_PLATFORM_PLUGIN_PATH")


def restore_process_environ() -> Restored:
    """Linux, frozen: replace ``os.environ`` by the original environment (see the module docstring), but for
    :data:`QT_OWN_VARS`, which the process leaves unset when they pointed into the bundle."""
    if not (is_frozen() and sys.platform.startswith("linux")) or RESTORED.applied:
        return RESTORED
    before = dict(os.environ)
    after = original_environ(before, bundle=bundle_dirs(), initial=None)
    for name in before:
        if name not in after:
            del os.environ[name]
            RESTORED.removed.append(name)
    for name, value in after.items():
        if before.get(name) != value:
            os.environ[name] = value
            RESTORED.restored[name] = value
    RESTORED.applied = True
    return RESTORED


def adopt_child_environ() -> None:
    """Frozen: make this process's environment the one its children should get (:func:`child_environ`).

    For a process of the bundle that only starts another program (the tool supervisor, ``--child-guard``):
    :func:`restore_process_environ` left the Qt variables unset for the bundled Qt, but the program it starts
    must see the user's own values again. Does nothing from source.
    """
    if not bundle_dirs():
        return
    env = child_environ()
    for name in [n for n in os.environ if n not in env]:
        del os.environ[name]
    os.environ.update(env)


def startup() -> None:
    """First thing in the frozen entry point; does nothing from source."""
    if not is_frozen():
        return
    import multiprocessing

    # A worker (spawn/forkserver) or multiprocessing's resource tracker started from python_runner's code is
    # this executable again; freeze_support() runs it here and exits.
    multiprocessing.freeze_support()
    restore_process_environ()
