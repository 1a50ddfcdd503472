"""What the PyInstaller bundle must contain that PyInstaller cannot find by itself (used by build.spec).

Tools are imported by name from tools.json (``importlib.import_module`` in the registry), CLI subcommands by
name from ``cli.COMMANDS``, and a few modules lazily by name; PyInstaller's import analysis sees none of
them. Deriving the list here means a tool added to tools.json is bundled without editing the spec, and a
test checks the spec really uses this function.
"""

from __future__ import annotations

import json
from pathlib import Path

#: Modules the app imports by name at run time (``importlib.import_module("...")`` with a literal).
LAZY_MODULES = (
    "weclaw_desktop.app",  # cli.main: the GUI (its package imports the composition root, app/root.py)
    "weclaw_desktop.agent.runtime",  # app.load_runtime, off the UI thread
    "weclaw_desktop.app.services",  # app.load_services (reminders, MCP, phone link), off the UI thread
    "weclaw_desktop.ui.selftest",  # cli.main: --self-test
    "weclaw_desktop.tools.pyexec",  # cli.main: --run-python (python_runner in the bundle)
)


def tool_modules(tools_json: Path) -> list[str]:
    """Every tool module tools.json names (enabled or not: a user may enable a tool later)."""
    manifest = json.loads(tools_json.read_text(encoding="utf-8"))
    return sorted({str(entry["module"]) for entry in manifest["tools"].values()})


def command_modules() -> list[str]:
    from weclaw_desktop.cli import COMMANDS

    return [f"weclaw_desktop.commands.{name}" for name in COMMANDS]


def hidden_imports(root: Path) -> list[str]:
    """Hidden imports for the bundle built from the repository at ``root``."""
    return sorted({*tool_modules(root / "tools.json"), *command_modules(), *LAZY_MODULES})


# --- libraries left behind by pruning --------------------------------------------------------------
# build.spec drops Qt plugins the app does not use (the GTK platform theme, ...). PyInstaller has already
# collected the shared libraries those plugins link to (GTK, cairo, pango, ...: ~25 MB), so the spec also
# drops every library that only dropped binaries needed. Linux (ELF) only; elsewhere nothing is removed.

_SHT_DYNAMIC = 6
_DT_NEEDED = 1


def elf_needed(path: str | Path) -> list[str] | None:
    """The DT_NEEDED names of a 64-bit little-endian ELF file, or None if it is not one (or unreadable)."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    shoff = int.from_bytes(data[0x28:0x30], "little")
    shentsize = int.from_bytes(data[0x3A:0x3C], "little")
    shnum = int.from_bytes(data[0x3C:0x3E], "little")
    sections = []
    for i in range(shnum):
        base = shoff + i * shentsize
        header = data[base : base + 64]
        if len(header) < 64:
            return None
        sections.append(
            (
                int.from_bytes(header[4:8], "little"),  # sh_type
                int.from_bytes(header[0x18:0x20], "little"),  # sh_offset
                int.from_bytes(header[0x20:0x28], "little"),  # sh_size
                int.from_bytes(header[0x28:0x2C], "little"),  # sh_link
            )
        )
    needed: list[str] = []
    for kind, offset, size, link in sections:
        if kind != _SHT_DYNAMIC or link >= len(sections):
            continue
        str_offset = sections[link][1]
        for entry in range(offset, offset + size, 16):
            tag = int.from_bytes(data[entry : entry + 8], "little")
            if tag == 0:
                break
            if tag == _DT_NEEDED:
                start = str_offset + int.from_bytes(data[entry + 8 : entry + 16], "little")
                needed.append(data[start : data.index(b"\0", start)].decode("utf-8", "replace"))
    return needed


def orphaned_libraries(kept: list[tuple[str, str]], dropped: list[tuple[str, str]]) -> set[str]:
    """Bundle names (``dest``) of kept libraries that only ``dropped`` binaries needed.

    ``kept`` and ``dropped`` are ``(dest, src)`` pairs. A kept library is an orphan when a dropped binary
    needs it (directly or through other libraries) and no other kept binary does. Anything the dropped
    binaries do not reach stays, so libraries loaded by ctypes at run time are never removed here.
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
    return {by_base[name][0] for name in candidates - still_needed}
