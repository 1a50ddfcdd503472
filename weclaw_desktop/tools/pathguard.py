"""The one path-safety check for every tool that touches a user's files.

A path the model sends is turned into an absolute, symlink-resolved :class:`~pathlib.Path`, or refused
with a :class:`ToolError` that says why and what to do:

- ``~`` is expanded; a relative path is relative to the user's home folder (or, when the home folder is
  not one of the allowed roots, to the first allowed root).
- The path must lie inside an allowed root: ``ctx.allowed_roots`` (default: the home folder), and
  ``ctx.outputs_dir`` is always allowed. Containment is checked after resolving ``..`` and symlinks, so
  ``~/../etc/passwd`` and a link that points out of the root are both refused.
- Denied folders are never touched, even inside an allowed root: SSH/GPG/cloud credentials, keyrings,
  browser profiles (cookies, saved passwords) on Windows, macOS and Linux, the Trash (what was deleted
  must not be read back from there), and WeClaw's own data, settings, log and cache folders (its outputs
  and incoming folders excepted). The check is done on the path as written and on the resolved path.
- Whole trees: a folder that *contains* a denied path is not moved or deleted as a whole
  (:meth:`PathGuard.refuse_protected_inside`), and copying or zipping it leaves the protected parts out,
  saying so (:meth:`PathGuard.skip_protected`), so ``~/.config`` cannot carry ``~/.config/gcloud`` out.
- Windows drive paths (``C:\\Users\\me``) work on Windows; on macOS/Linux they get a clear error instead of
  silently becoming a file named ``C:\\Users\\me`` in the home folder.
- A name that is not valid in the file-system encoding (GBK bytes on a UTF-8 Linux) is shown to the model
  with ``\\xNN`` escapes (``textsafe.fs_display``); such a path sent back is turned into the real name
  (``textsafe.fs_restore``) when no file has the escaped name literally.

Use :func:`resolve_user_path` for one path, or a :class:`PathGuard` when walking many (search, zip).
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path, PurePath

from weclaw_desktop.textsafe import fs_restore
from weclaw_desktop.toolkit.base import ToolContext, ToolError

RELATIVE_NOTE = "Relative paths are relative to the user's home folder; '~' also means the home folder."

_DRIVE = re.compile(r"^[A-Za-z]:")
_DRIVE_ABS = re.compile(r"^[A-Za-z]:[\\/]")
_CASE_INSENSITIVE = sys.platform in ("win32", "darwin")

# Home-relative folders and files that hold credentials or private browser data, on any OS.
_DENIED_IN_HOME: tuple[str, ...] = (
    # keys and credentials
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".config/gcloud",
    ".netrc",
    ".git-credentials",
    ".pgpass",
    ".password-store",
    # keyrings
    ".local/share/keyrings",
    "Library/Keychains",
    # browser profiles - Linux (native, flatpak, snap)
    ".config/google-chrome",
    ".config/google-chrome-beta",
    ".config/chromium",
    ".config/microsoft-edge",
    ".config/BraveSoftware",
    ".mozilla",
    ".var/app/org.mozilla.firefox",
    ".var/app/com.google.Chrome",
    ".var/app/org.chromium.Chromium",
    ".var/app/com.microsoft.Edge",
    "snap/firefox",
    "snap/chromium",
    # browser profiles - macOS
    "Library/Application Support/Google/Chrome",
    "Library/Application Support/Chromium",
    "Library/Application Support/Microsoft Edge",
    "Library/Application Support/BraveSoftware",
    "Library/Application Support/Firefox",
    "Library/Safari",
    "Library/Containers/com.apple.Safari",
    "Library/Cookies",
)

# Relative to %LOCALAPPDATA% / %APPDATA% on Windows (also checked under the default AppData in home).
_DENIED_IN_LOCALAPPDATA: tuple[str, ...] = (
    "Google/Chrome/User Data",
    "Chromium/User Data",
    "Microsoft/Edge/User Data",
    "BraveSoftware",
    "Mozilla/Firefox",
    "Microsoft/Credentials",
    "Microsoft/Vault",
)
_DENIED_IN_APPDATA: tuple[str, ...] = (
    "Mozilla/Firefox",
    "Microsoft/Credentials",
    "Microsoft/Protect",
    "Microsoft/Crypto",
    "Microsoft/SystemCertificates",
)


def _fold(text: str) -> str:
    return text.casefold() if _CASE_INSENSITIVE else text


def _key(path: PurePath) -> tuple[str, ...]:
    parts = path.parts
    return tuple(p.casefold() for p in parts) if _CASE_INSENSITIVE else parts


def is_within(path: PurePath, root: PurePath) -> bool:
    """True when ``path`` is ``root`` or inside it (both absolute and normalised)."""
    p, r = _key(path), _key(root)
    return p[: len(r)] == r


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _lexical(path: Path) -> Path:
    return Path(os.path.normpath(path))


def home_folder() -> Path:
    """The user's home folder (``$HOME``, or ``%USERPROFILE%`` on Windows)."""
    return Path(os.path.expanduser("~"))


def denied_paths(home: Path | None = None) -> list[Path]:
    """Folders and files no tool may read or change (as written, not resolved)."""
    home = home or home_folder()
    found = [home / rel for rel in _DENIED_IN_HOME]
    local_bases = [home / "AppData" / "Local"]
    roaming_bases = [home / "AppData" / "Roaming"]
    if os.environ.get("LOCALAPPDATA"):
        local_bases.append(Path(os.environ["LOCALAPPDATA"]))
    if os.environ.get("APPDATA"):
        roaming_bases.append(Path(os.environ["APPDATA"]))
    found += [base / rel for base in local_bases for rel in _DENIED_IN_LOCALAPPDATA]
    found += [base / rel for base in roaming_bases for rel in _DENIED_IN_APPDATA]
    found += trash_folders(home)
    found += _weclaw_private()
    return found


#: Folder names that are a Trash wherever they are (other volumes' trash folders, Windows' recycle bin).
_DENIED_NAMES: tuple[str, ...] = ("$Recycle.Bin", ".Trashes", ".Trash-*", "RECYCLER")


def trash_folders(home: Path | None = None) -> list[Path]:
    """The user's trash folders: what was deleted must not be read back (freedesktop, macOS)."""
    home = home or home_folder()
    xdg = os.environ.get("XDG_DATA_HOME")
    found = [home / ".local" / "share" / "Trash", home / ".Trash"]
    if xdg:
        found.append(Path(xdg) / "Trash")
    return found


def _weclaw_private() -> list[Path]:
    """WeClaw's own folders: its database, settings, logs and cache (outputs and incoming are excepted)."""
    from weclaw_desktop.paths import app_paths

    paths = app_paths()
    db = paths.database
    return [
        db,
        db.with_name(db.name + "-wal"),
        db.with_name(db.name + "-shm"),
        db.with_name(db.name + "-journal"),
        db.with_name(db.name + "-locks"),  # storage/locks.py: a process that opened it could drop the locks
        db.parent / "damaged",  # storage/db.py keeps damaged databases there: the same private data
        paths.data,
        paths.config,
        paths.logs,
        paths.cache,
    ]


def _weclaw_open() -> list[Path]:
    """Folders inside WeClaw's data folder that tools work in (created files, files from the phone)."""
    from weclaw_desktop.paths import app_paths

    paths = app_paths()
    return [paths.outputs, paths.incoming]


class PathGuard:
    """The allowed roots and denied paths of one tool call. Cheap to build; build one per call."""

    def __init__(self, ctx: ToolContext) -> None:
        self.home = home_folder()
        configured = [Path(os.path.expanduser(str(r))) for r in ctx.allowed_roots] or [self.home]
        self.roots: list[Path] = _unique([_real(r) for r in configured])
        self.outputs_dir = _real(Path(ctx.outputs_dir).expanduser())
        self._all_roots = _unique([*self.roots, self.outputs_dir])
        denied = denied_paths(self.home)
        self._denied: list[Path] = _unique([_lexical(d) for d in denied] + [_real(d) for d in denied])
        self._denied_keys: dict[tuple[str, ...], Path] = {_key(d): d for d in self._denied}
        opened = [*_weclaw_open(), Path(ctx.outputs_dir).expanduser()]
        self._open: list[Path] = _unique([_lexical(o) for o in opened] + [_real(o) for o in opened])
        real_home = _real(self.home)
        self.base = real_home if any(is_within(real_home, r) for r in self.roots) else self.roots[0]

    # --- checks ------------------------------------------------------------------------------------
    def denied_match(self, path: Path) -> Path | None:
        """The denied path that ``path`` (absolute, normalised) is inside, if any."""
        key = _key(path)
        for n in range(1, len(key) + 1):
            hit = self._denied_keys.get(key[:n])
            if hit is not None and not any(is_within(path, o) and is_within(o, hit) for o in self._open):
                return hit
        for i, part in enumerate(path.parts):
            if any(fnmatch.fnmatchcase(_fold(part), _fold(name)) for name in _DENIED_NAMES):
                return Path(*path.parts[: i + 1])
        return None

    # --- whole trees -------------------------------------------------------------------------------
    def protected_inside(self, folder: Path) -> list[Path]:
        """Denied paths that exist inside ``folder`` (checked as written and resolved), excepted folders
        (outputs, incoming) left out; ``folder`` itself is checked by :meth:`resolve`."""
        if not folder.is_dir() or folder.is_symlink():
            return []
        probes = _unique([_lexical(folder), _real(folder)])
        found: list[Path] = []
        for denied in self._denied:
            inside = any(is_within(denied, p) and denied != p for p in probes)
            if inside and os.path.lexists(denied) and not any(is_within(denied, o) for o in self._open):
                found.append(denied)
        return _unique(found)

    def refuse_protected_inside(self, folder: Path, verb: str) -> None:
        """Raise when ``folder`` holds protected paths: it cannot be moved or deleted as a whole."""
        inside = self.protected_inside(folder)
        if inside:
            shown = ", ".join(str(p) for p in inside[:3]) + (" …" if len(inside) > 3 else "")
            raise ToolError(
                f"{folder} cannot be {verb} as a whole: it contains protected folders ({shown}) that hold keys, "
                "passwords, deleted files or WeClaw's own data. Nothing was changed. Work on the other files in "
                "it one by one, or ask the user to do this by hand."
            )

    def skip_protected(self, path: Path) -> bool:
        """For walks (copy, zip): True when ``path`` found inside a tree must be left out."""
        return self.denied_match(_lexical(path)) is not None or (
            path.is_symlink() and self.denied_match(_real(path)) is not None
        )

    def is_denied(self, path: Path) -> bool:
        return self.denied_match(_lexical(path)) is not None or self.denied_match(_real(path)) is not None

    def is_allowed(self, path: Path) -> bool:
        """True when a path found while walking (search, zip) may be used: inside a root, not denied."""
        real = _real(path)
        return any(is_within(real, r) for r in self._all_roots) and not self.is_denied(path)

    def describe_roots(self) -> str:
        return ", ".join(str(r) for r in self._all_roots)

    # --- resolve -----------------------------------------------------------------------------------
    def resolve(self, raw: str, *, must_exist: bool = False, for_write: bool = False, keep_link: bool = False) -> Path:
        """The absolute, resolved path for ``raw``, or :class:`ToolError`.

        ``for_write``: the call will create, change or remove the path (an allowed root itself is refused).
        ``keep_link``: when the last component is a symlink, return the link itself (for delete, move,
        info), not its target; its folder must still be inside an allowed root.
        """
        text = _clean(raw)
        candidate = self._absolute(text, raw)
        restored = fs_restore(text)
        if restored is not None and not os.path.lexists(candidate):
            candidate = self._absolute(restored, raw)
        lexical = _lexical(candidate)
        keep = keep_link and os.path.islink(lexical)
        real = _real(lexical.parent) / lexical.name if keep else _real(lexical)

        for probe in (lexical, real):
            denied = self.denied_match(probe)
            if denied is not None:
                raise ToolError(
                    f"Access to '{raw}' is refused: it is inside {denied}, which holds passwords, keys or "
                    "browser data. WeClaw never reads or changes it; do not try another way around this."
                )
        if not any(is_within(real, r) for r in self._all_roots):
            if any(is_within(lexical, r) for r in self._all_roots):
                raise ToolError(
                    f"'{raw}' is a link that points outside the allowed folders (to {real}). "
                    f"Allowed folders: {self.describe_roots()}."
                )
            raise ToolError(
                f"'{raw}' ({real}) is outside the folders WeClaw may use: {self.describe_roots()}. "
                "Use a path inside them, or ask the user to add the folder to the allowed folders in settings."
            )
        if for_write and any(real == r for r in self._all_roots):
            raise ToolError(f"'{raw}' is an allowed root folder itself; WeClaw will not replace, move or delete it.")
        if must_exist and not os.path.lexists(real):
            raise ToolError(f"'{raw}' does not exist ({real}). Check the name; {RELATIVE_NOTE}")
        return real

    def _absolute(self, text: str, raw: str) -> Path:
        if os.name == "nt":
            if _DRIVE.match(text) and not _DRIVE_ABS.match(text):
                raise ToolError(f"'{raw}' is drive-relative; give a full path such as C:\\Users\\name\\file.txt.")
            if text[:1] in ("\\", "/") and text[:2] not in ("\\\\", "//"):
                raise ToolError(f"'{raw}' has no drive letter; give a full path such as C:\\Users\\name\\file.txt.")
        elif _DRIVE_ABS.match(text) or text.startswith("\\\\"):
            system = "macOS" if sys.platform == "darwin" else "Linux"
            raise ToolError(
                f"'{raw}' is a Windows path, but this computer runs {system}. "
                f"Use a path like ~/Documents/file.txt (home folder: {self.home})."
            )
        expanded = os.path.expanduser(text)
        if expanded.startswith("~"):
            raise ToolError(f"'{raw}': unknown user in '~name'. Use '~/...' for the home folder.")
        path = Path(expanded)
        return path if path.is_absolute() else self.base / path


def resolve_user_path(raw: str, ctx: ToolContext, *, must_exist: bool = False, for_write: bool = False) -> Path:
    """Resolve a path the model sent, refusing escapes and denied folders. See the module docstring."""
    return PathGuard(ctx).resolve(raw, must_exist=must_exist, for_write=for_write)


def _clean(raw: str) -> str:
    if not isinstance(raw, str):
        raise ToolError("A path must be a string.")
    text = raw.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    if not text:
        raise ToolError(f"No path given. {RELATIVE_NOTE}")
    if "\x00" in text:
        raise ToolError("The path contains a NUL character; send the path as plain text.")
    if text.startswith("file://"):
        from urllib.parse import unquote, urlparse

        parsed = urlparse(text)
        text = unquote(parsed.path)
        if os.name == "nt" and re.match(r"^/[A-Za-z]:", text):
            text = text[1:]
    return text


def _unique(paths: Iterable[Path]) -> list[Path]:
    seen: set[tuple[str, ...]] = set()
    out: list[Path] = []
    for p in paths:
        k = _key(p)
        if k not in seen:
            seen.add(k)
            out.append(p)
    return out
