"""Blocking zip work behind the archive tool: create, inspect and safely extract. Runs in worker threads.

Extraction is checked before anything is written: every entry must land inside the target folder (no
absolute names, drive letters or ``..``: zip-slip), outside denied folders, within the limits on entry
count and total size, below a compression ratio that only zip bombs reach (per big entry, and for the
archive as a whole: 300 entries of just under 1 MiB of zeros each pass any per-entry check), and the
disk must have room for it. While writing, the actual bytes are counted too, because a crafted archive
can declare sizes it does not have: extraction stops at the declared size of an entry, at the total
limit and at the total ratio, and what was written is removed.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
import threading
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from weclaw_desktop.toolkit.base import ToolError
from weclaw_desktop.tools.common import human_size
from weclaw_desktop.tools.pathguard import PathGuard, is_within

Progress = Callable[[float | None, str], None]
CHUNK = 1024 * 1024
_UTF8_FLAG = 0x800


class Stopped(Exception):
    """The call was cancelled while a worker thread was busy."""


@dataclass(frozen=True)
class Limits:
    max_entries: int
    max_total_bytes: int
    max_ratio: float
    ratio_min_bytes: int = 1024 * 1024  # small entries may compress extremely well; only big ones are checked


# --- names -----------------------------------------------------------------------------------------------
def entry_name(info: zipfile.ZipInfo) -> str:
    """The entry's real name: zips made on Chinese Windows store GBK names without the UTF-8 flag."""
    name = info.filename
    if info.flag_bits & _UTF8_FLAG:
        return name
    try:
        raw = name.encode("cp437")
    except UnicodeEncodeError:
        return name
    for encoding in ("utf-8", "gb18030"):
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    return name


_DRIVE = re.compile(r"^[A-Za-z]:")


def unsafe_reason(name: str) -> str | None:
    """Why an entry name could write outside the target folder, or None when it is safe."""
    normalized = name.replace("\\", "/")
    if normalized.startswith("/") or _DRIVE.match(normalized):
        return "absolute path"
    if ".." in PurePosixPath(normalized).parts:
        return "'..' escapes the folder"
    if "\x00" in normalized:
        return "NUL in name"
    return None


# --- inspect ---------------------------------------------------------------------------------------------
@dataclass
class Entry:
    name: str
    size: int
    compressed: int
    is_dir: bool
    encrypted: bool
    modified: str
    unsafe: str | None = None


@dataclass
class Listing:
    entries: list[Entry] = field(default_factory=list)
    total_size: int = 0
    compressed_size: int = 0


def open_zip(path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise ToolError(f"{path.name} is not a zip archive or is damaged{_other_format(path)}.") from None
    except IsADirectoryError:
        raise ToolError(f"{path} is a folder, not an archive.") from None


def _other_format(path: Path) -> str:
    with contextlib.suppress(OSError), open(path, "rb") as fh:
        head = fh.read(8)
        kinds = {b"Rar!": "RAR", b"7z\xbc\xaf": "7z", b"\x1f\x8b": "gzip/tar.gz"}
        for magic, kind in kinds.items():
            if head.startswith(magic):
                return f" (it is a {kind} archive; only zip is supported, the shell tool may have tar/7z)"
    return ""


def list_zip(path: Path) -> Listing:
    with open_zip(path) as zf:
        listing = Listing()
        for info in zf.infolist():
            name = entry_name(info)
            y, mo, d, h, mi, _ = info.date_time
            listing.entries.append(
                Entry(
                    name=name,
                    size=info.file_size,
                    compressed=info.compress_size,
                    is_dir=info.is_dir(),
                    encrypted=bool(info.flag_bits & 0x1),
                    modified=f"{y:04d}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}",
                    unsafe=unsafe_reason(name),
                )
            )
            listing.total_size += info.file_size
            listing.compressed_size += info.compress_size
        return listing


# --- extract ---------------------------------------------------------------------------------------------
@dataclass
class Extracted:
    files: int
    folders: int
    bytes: int
    replaced: list[str]
    written: list[Path]


def total_ratio_cap(limits: Limits, archive_bytes: int) -> int:
    """Most bytes an archive of ``archive_bytes`` may unpack to before it counts as a zip bomb."""
    return max(int(limits.max_ratio * max(archive_bytes, 1)), limits.ratio_min_bytes)


def check_archive(zf: zipfile.ZipFile, limits: Limits, archive_bytes: int | None = None) -> None:
    """Refuse an archive before extraction: too many entries, too big, too compressed, encrypted.

    ``archive_bytes``: the archive's size on disk (the one size its headers cannot lie about).
    """
    infos = zf.infolist()
    if len(infos) > limits.max_entries:
        raise ToolError(
            f"The archive has {len(infos)} entries, more than the limit of {limits.max_entries}. "
            "Nothing was extracted (this protects against zip bombs)."
        )
    total = sum(i.file_size for i in infos)
    if total > limits.max_total_bytes:
        raise ToolError(
            f"The archive would unpack to {human_size(total)}, more than the limit of "
            f"{human_size(limits.max_total_bytes)}. Nothing was extracted."
        )
    if archive_bytes is not None and total > total_ratio_cap(limits, archive_bytes):
        raise ToolError(
            f"The archive would unpack to {human_size(total)} from {human_size(archive_bytes)} "
            f"({total / max(archive_bytes, 1):.0f}x over {len(infos)} entries), which only zip bombs do. "
            "Nothing was extracted."
        )
    for info in infos:
        if info.file_size >= limits.ratio_min_bytes:
            ratio = info.file_size / max(info.compress_size, 1)
            if ratio > limits.max_ratio:
                raise ToolError(
                    f"Entry '{entry_name(info)}' expands {ratio:.0f}x ({human_size(info.compress_size)} -> "
                    f"{human_size(info.file_size)}), which only zip bombs do. Nothing was extracted."
                )
        if info.flag_bits & 0x1:
            raise ToolError(f"The archive is password-protected ('{entry_name(info)}'); that is not supported.")


def plan_targets(zf: zipfile.ZipFile, dest: Path, guard: PathGuard) -> list[tuple[zipfile.ZipInfo, Path]]:
    """Where each entry goes; refuses the whole archive if any entry would leave ``dest`` or hit a denied path."""
    real_dest = Path(os.path.realpath(dest))
    plan: list[tuple[zipfile.ZipInfo, Path]] = []
    for info in zf.infolist():
        name = entry_name(info)
        reason = unsafe_reason(name)
        parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
        if reason is None and not parts:
            continue
        target = real_dest.joinpath(*parts) if parts else real_dest
        resolved = Path(os.path.realpath(target))
        if reason is None and not is_within(resolved, real_dest):
            reason = "leads outside the folder through a link"
        if reason is not None:
            raise ToolError(
                f"The archive is unsafe: entry '{name}' would be written outside the target folder ({reason}). "
                "Nothing was extracted."
            )
        if guard.denied_match(resolved) is not None:
            raise ToolError(f"Entry '{name}' would write into a protected folder ({resolved}). Nothing was extracted.")
        plan.append((info, resolved))
    return plan


def extract_zip(
    path: Path,
    dest: Path,
    *,
    guard: PathGuard,
    limits: Limits,
    overwrite: bool,
    stop: threading.Event,
    progress: Progress,
    trash: Callable[[Path], None],
) -> Extracted:
    archive_bytes = path.stat().st_size
    with open_zip(path) as zf:
        check_archive(zf, limits, archive_bytes)
        plan = plan_targets(zf, dest, guard)
        _check_room(dest, sum(i.file_size for i, _ in plan))
        clashes = [t for info, t in plan if not info.is_dir() and (t.exists() or t.is_symlink())]
        if clashes and not overwrite:
            shown = ", ".join(str(c) for c in clashes[:5]) + (" …" if len(clashes) > 5 else "")
            raise ToolError(
                f"{len(clashes)} files already exist in {dest} ({shown}). Nothing was extracted. Extract to a new "
                "folder, or call again with overwrite=true (replaced files go to the trash)."
            )
        for target in clashes:
            if target.is_dir():
                raise ToolError(f"{target} is a folder but the archive has a file there. Nothing was extracted.")
        dest_existed = dest.exists()
        created: list[Path] = []
        total = max(sum(i.file_size for i, _ in plan), 1)
        cap = min(limits.max_total_bytes, total_ratio_cap(limits, archive_bytes))
        done = files = folders = 0
        try:
            dest.mkdir(parents=True, exist_ok=True)
            for info, target in plan:
                if stop.is_set():
                    raise Stopped()
                if info.is_dir():
                    if not target.exists():
                        target.mkdir(parents=True, exist_ok=True)
                        created.append(target)
                        folders += 1
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                if target.exists() or target.is_symlink():
                    trash(target)
                done += _extract_one(zf, info, target, cap, done, stop, created)
                files += 1
                progress(min(done / total, 1.0), f"extracted {files} files, {human_size(done)}")
        except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
            _undo(created, dest if not dest_existed else None)
            raise ToolError(f"{path.name} is damaged ({exc}). What was extracted so far was removed.") from None
        except BaseException:
            _undo(created, dest if not dest_existed else None)
            raise
        written = [p for p in created if not p.is_dir()]
        return Extracted(files, folders, done, [str(c) for c in clashes], written)


def _check_room(dest: Path, needed: int) -> None:
    """Refuse when the destination's disk has less free space than the archive unpacks to."""
    probe = dest
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    try:
        free = shutil.disk_usage(probe).free
    except OSError:
        return
    if needed > free:
        raise ToolError(
            f"The archive unpacks to {human_size(needed)} but the disk holding {probe} has only "
            f"{human_size(free)} free. Nothing was extracted; free some space or extract somewhere else."
        )


def _extract_one(
    zf: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    target: Path,
    cap: int,
    done_before: int,
    stop: threading.Event,
    created: list[Path],
) -> int:
    written = 0
    created.append(target)
    with zf.open(info) as src, open(target, "wb") as out:
        while True:
            if stop.is_set():
                raise Stopped()
            chunk = src.read(CHUNK)
            if not chunk:
                break
            written += len(chunk)
            if written > info.file_size or done_before + written > cap:
                raise ToolError(
                    f"Entry '{entry_name(info)}' unpacks to more than it declares; the archive is crafted to "
                    "fill the disk. Extraction was stopped and what was written removed."
                )
            out.write(chunk)
    mode = (info.external_attr >> 16) & 0o777
    if mode and not stat.S_ISLNK(info.external_attr >> 16):
        with contextlib.suppress(OSError):
            os.chmod(target, mode | stat.S_IRUSR | stat.S_IWUSR)
    return written


def _undo(created: list[Path], new_root: Path | None) -> None:
    if new_root is not None:
        shutil.rmtree(new_root, ignore_errors=True)
        return
    for path in reversed(created):
        with contextlib.suppress(OSError):
            if path.is_dir() and not path.is_symlink():
                path.rmdir()
            else:
                path.unlink()


# --- create ----------------------------------------------------------------------------------------------
@dataclass
class Source:
    path: Path
    arcname: str


def collect(sources: list[Source], guard: PathGuard, skip: Path) -> tuple[list[tuple[Path, str]], int, int]:
    """(file or folder path, name in the archive) for everything to pack; skipped protected items; bytes."""
    items: list[tuple[Path, str]] = []
    skipped = 0
    total = 0
    for source in sources:
        if source.path.is_file():
            items.append((source.path, source.arcname))
            total += source.path.stat().st_size
            continue
        items.append((source.path, source.arcname + "/"))
        for dirpath, dirnames, filenames in os.walk(source.path):
            here = Path(dirpath)
            kept = []
            for d in sorted(dirnames):
                sub = here / d
                if guard.denied_match(sub) is not None or (sub.is_symlink() and not guard.is_allowed(sub)):
                    skipped += 1
                    continue
                kept.append(d)
            dirnames[:] = kept
            rel_dir = here.relative_to(source.path)
            for d in kept:
                items.append((here / d, f"{source.arcname}/{(rel_dir / d).as_posix()}/"))
            for name in sorted(filenames):
                file = here / name
                if file == skip:
                    continue
                if guard.denied_match(file) is not None or (file.is_symlink() and not guard.is_allowed(file)):
                    skipped += 1
                    continue
                with contextlib.suppress(OSError):
                    total += file.stat().st_size
                    items.append((file, f"{source.arcname}/{(rel_dir / name).as_posix()}"))
    return items, skipped, total


def create_zip(
    output: Path,
    items: list[tuple[Path, str]],
    total: int,
    *,
    stop: threading.Event,
    progress: Progress,
) -> int:
    """Write the archive through a temp file next to ``output``; returns the files packed."""
    output.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=".weclaw-", suffix=".zip.tmp", dir=output.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    done = files = 0
    try:
        with zipfile.ZipFile(
            tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6, strict_timestamps=False
        ) as zf:
            for path, arcname in items:
                if stop.is_set():
                    raise Stopped()
                if arcname.endswith("/"):
                    zf.write(path, arcname)
                    continue
                info = zipfile.ZipInfo.from_file(path, arcname, strict_timestamps=False)
                info.compress_type = zipfile.ZIP_DEFLATED
                with open(path, "rb") as src, zf.open(info, "w") as dst:
                    while chunk := src.read(CHUNK):
                        if stop.is_set():
                            raise Stopped()
                        dst.write(chunk)
                        done += len(chunk)
                        progress(min(done / max(total, 1), 1.0), f"packed {files} files, {human_size(done)}")
                files += 1
        os.replace(tmp, output)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return files
