"""Which classes of paths (tools.json ``safety.paths``) a path belongs to: persistence, credentials, ...

The classes are data, per platform (:class:`~weclaw_desktop.toolkit.manifest.PathClass`); this module only
matches. A path is checked as written (normalised, ``~`` expanded, relative to the home folder) and
resolved through symlinks, so ``~/x/../.bashrc`` and a link to ``~/.bashrc`` are both in "persistence".
On Windows and macOS names compare case-insensitively (as their file systems do).

Entry forms (see PathClass): a prefix (``~/.ssh``, ``{appdata}/Microsoft/...``: the path is the entry or
inside it), ``name:GLOB`` (the file name matches), ``**/a/b`` (the parts ``a/b`` appear anywhere; globs
allowed per part).
"""

from __future__ import annotations

import fnmatch
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from weclaw_desktop.paths import AppPaths, app_paths
from weclaw_desktop.toolkit.manifest import PathClass

_CASE_INSENSITIVE = sys.platform in ("win32", "darwin")


def fold(text: str) -> str:
    return text.casefold() if _CASE_INSENSITIVE else text


def parts_key(path: PurePath) -> tuple[str, ...]:
    return tuple(fold(p) for p in path.parts)


def within(path: PurePath, root: PurePath) -> bool:
    p, r = parts_key(path), parts_key(root)
    return p[: len(r)] == r


@dataclass(frozen=True)
class Places:
    """The folders the ``{place}`` names stand for. Built by the composition root from AppPaths/settings."""

    folders: Mapping[str, tuple[Path, ...]] = field(default_factory=dict)

    @classmethod
    def default(
        cls, paths: AppPaths | None = None, *, incoming: Path | None = None, outputs: Path | None = None
    ) -> Places:
        paths = paths or app_paths()
        home = Path(os.path.expanduser("~"))
        env = os.environ
        found: dict[str, tuple[Path, ...]] = {
            "data": (paths.data,),
            "config": (paths.config,),
            "logs": (paths.logs,),
            "cache": (paths.cache,),
            "incoming": (incoming or paths.incoming,),
            "outputs": (outputs or paths.outputs,),
            "xdg_config": (Path(env.get("XDG_CONFIG_HOME") or home / ".config"),),
            "xdg_data": (Path(env.get("XDG_DATA_HOME") or home / ".local" / "share"),),
            "PATH": tuple(Path(p) for p in env.get("PATH", "").split(os.pathsep) if p and os.path.isabs(p)),
        }
        for name, var in (("appdata", "APPDATA"), ("localappdata", "LOCALAPPDATA"), ("programdata", "ProgramData")):
            value = env.get(var)
            found[name] = (Path(value),) if value else ()
        return cls(found)

    def with_folder(self, name: str, *folders: Path) -> Places:
        return Places({**self.folders, name: tuple(folders)})


@dataclass(frozen=True)
class _Entry:
    kind: str  # "prefix" | "name" | "anywhere"
    prefix: Path | None = None
    glob: str = ""
    parts: tuple[str, ...] = ()


class PathClassifier:
    """Matches absolute paths against the declared classes. Cheap to query; build once per settings."""

    def __init__(
        self,
        classes: Mapping[str, PathClass],
        places: Places | None = None,
        *,
        home: Path | None = None,
        platform: str = sys.platform,
    ) -> None:
        self.home = home or Path(os.path.expanduser("~"))
        self.places = places or Places.default()
        self.labels = {name: c.label for name, c in classes.items()}
        self._entries: dict[str, list[_Entry]] = {
            name: [e for raw in c.entries(platform) for e in self._parse(raw)] for name, c in classes.items()
        }

    def _parse(self, raw: str) -> list[_Entry]:
        if raw.startswith("name:"):
            return [_Entry("name", glob=fold(raw[5:]))]
        if raw.startswith("**/"):
            return [_Entry("anywhere", parts=tuple(fold(p) for p in raw[3:].split("/") if p))]
        if raw.startswith("{"):
            end = raw.index("}")
            place, rest = raw[1:end], raw[end + 1 :].lstrip("/\\")
            bases = self.places.folders.get(place, ())
            return [_Entry("prefix", prefix=_norm(base / rest if rest else base)) for base in bases]
        if raw.startswith("~"):
            return [_Entry("prefix", prefix=_norm(self.home / raw[1:].lstrip("/\\")))]
        return [_Entry("prefix", prefix=_norm(Path(raw)))]

    # --- queries ---------------------------------------------------------------------------------------
    def spellings(self, raw: str | os.PathLike[str], base: Path | None = None) -> list[Path]:
        """The path as written (normalised) and resolved through symlinks."""
        text = os.path.expanduser(os.fspath(raw).strip())
        path = Path(text)
        if not path.is_absolute():
            path = (base or self.home) / path
        lexical = _norm(path)
        real = Path(os.path.realpath(lexical))
        return [lexical] if real == lexical else [lexical, real]

    def classes_of(self, raw: str | os.PathLike[str], base: Path | None = None) -> set[str]:
        found: set[str] = set()
        for path in self.spellings(raw, base):
            for name, entries in self._entries.items():
                if name not in found and any(_matches(e, path) for e in entries):
                    found.add(name)
        return found

    def in_class(self, raw: str | os.PathLike[str], name: str, base: Path | None = None) -> bool:
        entries = self._entries.get(name, [])
        return any(_matches(e, p) for p in self.spellings(raw, base) for e in entries)

    def first_in(self, raws: Iterable[str], classes: Iterable[str], base: Path | None = None) -> tuple[str, str] | None:
        """The first (path, class) of ``raws`` that lies in one of ``classes``."""
        wanted = list(classes)
        for raw in raws:
            for name in wanted:
                if self.in_class(raw, name, base):
                    return raw, name
        return None

    def prefixes(self, name: str) -> list[Path]:
        """The folder entries of a class (for tree checks: is a protected entry inside this folder?)."""
        return [e.prefix for e in self._entries.get(name, []) if e.kind == "prefix" and e.prefix is not None]


def _norm(path: Path) -> Path:
    return Path(os.path.normpath(path))


def _matches(entry: _Entry, path: Path) -> bool:
    if entry.kind == "prefix":
        assert entry.prefix is not None
        return within(path, entry.prefix)
    if entry.kind == "name":
        return fnmatch.fnmatchcase(fold(path.name), entry.glob)
    key = parts_key(path)
    n = len(entry.parts)
    return any(all(fnmatch.fnmatchcase(key[i + j], entry.parts[j]) for j in range(n)) for i in range(len(key) - n + 1))
