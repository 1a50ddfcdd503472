"""What the PyInstaller bundle must contain that PyInstaller cannot find by itself (used by build.spec).

Tools are imported by name from tools.json (``importlib.import_module`` in the registry), CLI subcommands by
name from ``cli.COMMANDS``, and a few modules lazily by name; PyInstaller's import analysis sees none of
them. Deriving the list here means a tool added to tools.json is bundled without editing the spec, and a
test checks the spec really uses this function.
"""

from __future__ import annotations

import importlib.util
import json
import pkgutil
import sys
from collections.abc import Iterable
from pathlib import Path

from weclaw_desktop.elf import clean_rpath, elf_needed

__all__ = ["clean_rpaths", "elf_needed", "hidden_imports", "orphaned_libraries", "stdlib_modules", "tool_modules"]

#: Modules the app imports by name at run time (``importlib.import_module("...")`` with a literal).
LAZY_MODULES = (
    "weclaw_desktop.app",  # cli.main: the GUI (its package imports the composition root, app/root.py)
    "weclaw_desktop.agent.runtime",  # app.load_runtime, off the UI thread
    "weclaw_desktop.app.services",  # app.load_services (reminders, MCP, phone link), off the UI thread
    "weclaw_desktop.ui.selftest",  # cli.main: --self-test
    "weclaw_desktop.tools.pyexec",  # cli.main: --run-python (python_runner in the bundle)
)


#: Packages nothing imports by name but the app needs: zoneinfo falls back to ``tzdata``'s database (found
#: with importlib.resources) where the system has none (Windows, a Linux machine without the tzdata package).
RUNTIME_PACKAGES = ("tzdata",)

#: Packages whose data files PyInstaller has no hook to collect: ``anyascii`` reads its transliteration
#: tables (``anyascii/_data/*``) with importlib.resources (MCP tool names in Chinese and other scripts).
DATA_PACKAGES = ("anyascii",)


def package_datas() -> list[tuple[str, str]]:
    """(source, destination) data entries of :data:`DATA_PACKAGES` for the spec's ``datas``."""
    from PyInstaller.utils.hooks import collect_data_files

    return [entry for name in DATA_PACKAGES for entry in collect_data_files(name)]


def tool_modules(tools_json: Path) -> list[str]:
    """Every tool module tools.json names (enabled or not: a user may enable a tool later)."""
    manifest = json.loads(tools_json.read_text(encoding="utf-8"))
    return sorted({str(entry["module"]) for entry in manifest["tools"].values()})


def command_modules() -> list[str]:
    from weclaw_desktop.cli import COMMANDS

    return [f"weclaw_desktop.commands.{name}" for name in COMMANDS]


def hidden_imports(root: Path) -> list[str]:
    """Hidden imports for the bundle built from the repository at ``root``."""
    return sorted({*tool_modules(root / "tools.json"), *command_modules(), *LAZY_MODULES, *RUNTIME_PACKAGES})


# --- the standard library for python_runner --------------------------------------------------------
# In the bundle python_runner's snippets run inside the app (``weclaw --run-python``), so they can import
# only what the bundle holds. PyInstaller collects only what the app imports; the spec adds the whole
# standard library the build's Python has, less what makes no sense without a Python installation.

#: Top-level standard-library modules left out: Tk and what needs it, IDLE, CPython's own test suite.
STDLIB_LEFT_OUT = frozenset(
    {"tkinter", "_tkinter", "turtle", "turtledemo", "idlelib", "test", "__hello__", "__phello__"}
)
#: Sub-packages left out wherever they are (the test suites of unittest, ctypes, lib2to3, sqlite3 ...).
STDLIB_TEST_PARTS = frozenset({"test", "tests", "idle_test"})
#: C modules that exist only to test CPython itself.
STDLIB_TEST_PREFIXES = ("_test", "_xxtest", "xx", "_ctypes_test")


def stdlib_modules(names: Iterable[str] | None = None) -> list[str]:
    """Every module and sub-module of the standard library this Python has, less :data:`STDLIB_LEFT_OUT`,
    test suites and test-only C modules. Found without importing anything (``find_spec`` of top-level
    names, ``pkgutil.iter_modules`` below them)."""
    out: set[str] = set()
    for top in sorted(sys.stdlib_module_names if names is None else names):
        if top in STDLIB_LEFT_OUT or top.startswith(STDLIB_TEST_PREFIXES):
            continue
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            continue
        if spec is None:
            continue
        out.add(top)
        if spec.submodule_search_locations:
            out.update(_submodules(top, list(spec.submodule_search_locations)))
    return sorted(out)


def _submodules(package: str, paths: list[str]) -> list[str]:
    found: list[str] = []
    for info in pkgutil.iter_modules(paths):
        if info.name in STDLIB_TEST_PARTS:
            continue
        name = f"{package}.{info.name}"
        found.append(name)
        if info.ispkg:
            found.extend(_submodules(name, [str(Path(p) / info.name) for p in paths]))
    return found


# --- system libraries the bundle leaves to the target ----------------------------------------------
#: The glibc the bundle is declared to need (Ubuntu 22.04 has 2.35). ``scripts/build_bundle.py`` measures
#: the bundle's ELF symbol versions and fails when they need more.
GLIBC_FLOOR = "2.35"
#: Libraries PyInstaller copies from the build machine that every target already has, and whose build
#: machine copies would raise the floor (Debian 12's libstdc++ and libexpat need glibc 2.36). Qt's own
#: libraries need libstdc++ GLIBCXX_3.4.29 (GCC 11: Ubuntu 22.04, RHEL 9 and newer have it). The system's
#: libstdc++ and libgcc_s are also the ones the system's OpenGL drivers (Mesa) are built against: a bundled
#: older libstdc++ makes them fail to load.
SYSTEM_LIBRARIES = ("libstdc++.so.6", "libgcc_s.so.1", "libexpat.so.1")


def clean_rpaths(bundle: Path) -> dict[str, str]:
    """Remove RPATH/RUNPATH entries that point outside the bundle from every ELF file in ``bundle``
    (``$ORIGIN`` entries stay). Returns file -> removed entries."""
    removed: dict[str, str] = {}
    for path in sorted(bundle.rglob("*")):
        if path.is_file() and not path.is_symlink():
            gone = clean_rpath(path)
            if gone:
                removed[str(path.relative_to(bundle))] = gone
    return removed


# --- libraries left behind by pruning --------------------------------------------------------------
# build.spec drops Qt plugins the app does not use (the GTK platform theme, ...). PyInstaller has already
# collected the shared libraries those plugins link to (GTK, cairo, pango, ...: ~25 MB), so the spec also
# drops every library that only dropped binaries needed. Linux (ELF) only; elsewhere nothing is removed.


def orphaned_libraries(kept: list[tuple[str, str]], dropped: list[tuple[str, str]]) -> set[str]:
    """Bundle names (``dest``) of kept libraries that only ``dropped`` binaries needed.

    ``kept`` and ``dropped`` are ``(dest, src)`` pairs. A kept library is an orphan when a dropped binary
    needs it (directly or through other libraries) and no other kept binary does. Anything the dropped
    binaries do not reach stays, so libraries loaded by ctypes at run time are never removed here. Every
    ``dest`` with an orphan's name is returned (PyInstaller may list a library twice: at the top level and
    next to the binary that needs it; keeping one of them would leave a dangling symlink).
    """
    by_base: dict[str, tuple[str, str]] = {Path(dest).name: (dest, src) for dest, src in kept}
    cache: dict[str, list[str]] = {}

    def deps(src: str) -> list[str]:
        if src not in cache:
            cache[src] = [name for name in elf_needed(src) or [] if name in by_base]
        return cache[src]

    def reach(sources: list[str]) -> set[str]:
        seen: set[str] = set()
        stack = list(sources)
        while stack:
            for name in deps(stack.pop()):
                if name not in seen:
                    seen.add(name)
                    stack.append(by_base[name][1])
        return seen

    candidates = reach([src for _dest, src in dropped])
    roots = [src for dest, src in kept if Path(dest).name not in candidates]
    still_needed = reach(roots)
    orphans = candidates - still_needed
    return {dest for dest, _src in kept if Path(dest).name in orphans}
