"""Blocking file operations behind the file tool. Every function here runs in a worker thread.

Paths are already checked by pathguard. Nothing here overwrites or deletes without being told to: the
replaced version of a file goes to the system trash, and deletion is always to the trash.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from weclaw_desktop.toolkit.base import ToolError
from weclaw_desktop.tools.common import human_size
from weclaw_desktop.tools.textio import sniff_file

TRASH_NAME = "the trash (Windows: 回收站 Recycle Bin; macOS: 废纸篓 Trash)"


def stamp(ts: float) -> str:
    return datetime.fromtimestamp(ts).isoformat(timespec="seconds")


def check_encoding(name: str) -> str:
    try:
        return codecs.lookup(name).name
    except LookupError:
        raise ToolError(f"Unknown text encoding '{name}'. Use e.g. 'utf-8', 'gbk', 'gb18030' or 'utf-16'.") from None


# --- read ------------------------------------------------------------------------------------------------
@dataclass
class ReadOutcome:
    text: str
    encoding: str | None
    size: int
    first_line: int
    last_line: int
    more: bool
    binary_kind: str | None = None


def read_text(
    path: Path, *, start_line: int, max_lines: int | None, max_chars: int, encoding: str | None
) -> ReadOutcome:
    if path.is_dir():
        raise ToolError(f"{path} is a folder, not a file. Use file_list to see what it contains.")
    size = path.stat().st_size
    if encoding is None:
        sniffed = sniff_file(path)
        if sniffed.is_binary:
            return ReadOutcome("", None, size, 0, 0, False, binary_kind=sniffed.binary_kind)
        encoding = sniffed.encoding
    assert encoding is not None
    parts: list[str] = []
    used = 0
    line_no = 1  # the line the next piece read belongs to
    first = last = 0
    lines_done = 0
    more = False
    open_line = False  # the last piece read did not end its line
    skip_chunk = 1 << 20  # lines before start_line are read in bounded pieces (a file may be one huge line)
    with open(path, encoding=encoding, errors="replace", newline="") as fh:
        while True:
            collecting = line_no >= start_line
            if collecting and ((max_lines is not None and lines_done >= max_lines) or used >= max_chars):
                more = bool(fh.read(1))
                break
            piece = fh.readline(max_chars - used if collecting else skip_chunk)
            if not piece:
                break
            ends = piece.endswith(("\n", "\r"))
            open_line = not ends
            if collecting:
                parts.append(piece)
                used += len(piece)
                first = first or line_no
                last = line_no
                lines_done += ends
            line_no += ends
    if first == 0:
        if start_line > 1:
            total = line_no - 1 + open_line
            raise ToolError(f"{path.name} has only {total} lines; start_line {start_line} is past the end.")
        first = last = 1
    text = "".join(parts)
    if start_line == 1:
        text = text.lstrip("\ufeff")
    return ReadOutcome(text, encoding, size, first, last, more)


# --- write / append ---------------------------------------------------------------------------------------
def encode(content: str, encoding: str) -> bytes:
    try:
        return content.encode(encoding)
    except UnicodeEncodeError as exc:
        bad = content[exc.start : exc.end]
        raise ToolError(
            f"The text contains {bad!r}, which encoding '{encoding}' cannot store. Use encoding 'utf-8'."
        ) from None


def to_trash(path: Path) -> None:
    from send2trash import send2trash

    try:
        send2trash(str(path))
    except Exception as exc:  # TrashPermissionError, OSError on volumes without a trash
        raise ToolError(
            f"Could not move {path} to {TRASH_NAME}: {exc}. Nothing was deleted; WeClaw never deletes "
            "permanently. The user can delete it by hand."
        ) from None


def atomic_write(path: Path, data: bytes, *, replace_existing: bool) -> bool:
    """Write ``data`` to ``path`` through a temp file. Returns True when an old version went to the trash."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".weclaw-", suffix=".tmp", dir=path.parent)
    trashed = False
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        if path.exists():
            if not replace_existing:
                raise ToolError(f"{path} already exists.")
            if path.is_file():
                with contextlib.suppress(OSError):
                    mode = stat.S_IMODE(path.stat().st_mode)
                    os.chmod(tmp, mode)
            to_trash(path)
            trashed = True
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return trashed


def appendable_encoding(path: Path, requested: str | None) -> str:
    """The encoding to append with: the file's own (without a second BOM), or the requested one."""
    if requested:
        return check_encoding(requested)
    if not path.exists() or path.stat().st_size == 0:
        return "utf-8"
    sniffed = sniff_file(path)
    if sniffed.is_binary or sniffed.encoding is None:
        raise ToolError(f"{path.name} is a binary file ({sniffed.binary_kind}); appending text would damage it.")
    enc = codecs.lookup(sniffed.encoding).name
    if enc in ("utf-16", "utf-32"):
        with open(path, "rb") as fh:
            head = fh.read(4)
        width = "16" if enc == "utf-16" else "32"
        little = head.startswith(codecs.BOM_UTF32_LE if width == "32" else codecs.BOM_UTF16_LE)
        return f"utf-{width}-{'le' if little else 'be'}"
    return "utf-8" if enc == "utf-8-sig" else enc


def ends_with_newline(path: Path, encoding: str) -> bool:
    size = path.stat().st_size
    if size == 0:
        return True
    nl = "\n".encode(encoding)
    with open(path, "rb") as fh:
        fh.seek(max(0, size - len(nl)))
        return fh.read() == nl


# --- info -------------------------------------------------------------------------------------------------
def describe(path: Path, *, folder_file_limit: int = 20000, time_limit_s: float = 3.0) -> dict[str, Any]:
    import mimetypes
    import time

    st = path.lstat()
    info: dict[str, Any] = {"path": str(path), "name": path.name}
    if stat.S_ISLNK(st.st_mode):
        info["type"] = "link"
        info["target"] = os.readlink(path)
        with contextlib.suppress(OSError):
            st = path.stat()
    if stat.S_ISDIR(st.st_mode):
        info.setdefault("type", "folder")
        total = files = folders = 0
        complete = True
        deadline = time.monotonic() + time_limit_s
        for dirpath, dirnames, filenames in os.walk(path):
            folders += len(dirnames)
            for name in filenames:
                files += 1
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(dirpath, name)).st_size
            if files >= folder_file_limit or time.monotonic() > deadline:
                complete = False
                break
        info.update(files=files, folders=folders, size=total, size_text=human_size(total), complete=complete)
    else:
        info.setdefault("type", "file")
        info.update(size=st.st_size, size_text=human_size(st.st_size))
        mime, _ = mimetypes.guess_type(path.name)
        if mime:
            info["mime"] = mime
        if stat.S_ISREG(st.st_mode):
            sniffed = sniff_file(path)
            if sniffed.is_binary:
                info["content"] = sniffed.binary_kind
            else:
                info["encoding"] = sniffed.encoding
    info.update(
        modified=stamp(st.st_mtime),
        created=stamp(getattr(st, "st_birthtime", st.st_ctime)),
        readable=os.access(path, os.R_OK),
        writable=os.access(path, os.W_OK),
    )
    return info


# --- copy / move ------------------------------------------------------------------------------------------
def count_files(path: Path, limit: int = 100_000) -> int:
    if not path.is_dir():
        return 1
    n = 0
    for _, _, filenames in os.walk(path):
        n += len(filenames)
        if n >= limit:
            break
    return n


class Cancelled(Exception):
    """Raised inside a worker thread when the call was stopped."""


def copy_any(
    src: Path,
    target: Path,
    *,
    stop: threading.Event,
    progress: Callable[[float | None, str], None],
    skip: Callable[[Path], bool] | None = None,
    skipped: list[Path] | None = None,
) -> int:
    """Copy a file or a folder tree to ``target`` (which must not exist). Returns the files copied.

    ``skip(path)`` leaves a file or folder of the tree out (pathguard's protected paths); what it left
    out is appended to ``skipped``. A folder copy that fails or is stopped halfway removes what it
    created, so no half copy is left.
    """
    if src.is_file():
        shutil.copy2(src, target)
        return 1
    total = max(count_files(src), 1)
    done = 0

    def copy_one(s: str, d: str) -> str:
        nonlocal done
        if stop.is_set():
            raise Cancelled()
        result = shutil.copy2(s, d)
        done += 1
        progress(min(done / total, 1.0), f"copied {done} of {total} files")
        return str(result)

    def ignore(folder: str, names: list[str]) -> set[str]:
        if skip is None:
            return set()
        left_out = {n for n in names if skip(Path(folder) / n)}
        if skipped is not None:
            skipped.extend(Path(folder) / n for n in sorted(left_out))
        return left_out

    try:
        shutil.copytree(src, target, symlinks=True, copy_function=copy_one, ignore=ignore)
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
    return done
