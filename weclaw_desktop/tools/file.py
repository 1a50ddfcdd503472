"""The file tool: read, write, append, list, search, info, copy, move, delete, mkdir.

Every path goes through pathguard (allowed roots, denied folders, no escapes). Blocking work runs in a
worker thread. Nothing is overwritten unless the call says overwrite=true (the old version then goes to the
trash), and delete always goes to the system trash, so everything stays recoverable.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import threading
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.textsafe import fs_hint
from weclaw_desktop.toolkit.argkinds import PathStr
from weclaw_desktop.toolkit.base import BaseTool, ToolContext, ToolError, ToolResult, action
from weclaw_desktop.tools import file_ops as ops
from weclaw_desktop.tools.common import human_size, threadsafe_progress
from weclaw_desktop.tools.file_search import SearchSpec, compile_content, run_search
from weclaw_desktop.tools.pathguard import RELATIVE_NOTE, PathGuard, is_within

_P = f"{RELATIVE_NOTE}"


class FileConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_read_chars: int = Field(60_000, ge=1000, description="characters one read returns at most")
    max_list_entries: int = Field(500, ge=10, description="entries one list returns at most")
    max_search_files: int = Field(50_000, ge=100, description="files one search looks at at most")
    search_time_s: float = Field(20.0, gt=0, description="seconds one search may take")
    max_search_results: int = Field(200, ge=1, description="hits one search returns at most")
    max_content_search_bytes: int = Field(5_000_000, ge=1000, description="larger files are skipped by content search")


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReadParams(_Params):
    path: PathStr = Field(description=f"The file to read. {_P}")
    start_line: int = Field(1, ge=1, description="First line to return (1-based). Use it to continue a truncated read.")
    max_lines: int | None = Field(
        None, ge=1, description="Return at most this many lines (default: up to the size cap)."
    )
    encoding: str | None = Field(
        None, description="Force a text encoding such as 'utf-8', 'gbk' or 'utf-16'. Leave empty to detect it."
    )


class WriteParams(_Params):
    path: PathStr = Field(description=f"The file to create. Missing folders are created. {_P}")
    content: str = Field(description="The full text to write.")
    overwrite: bool = Field(
        False,
        description="Replace the file if it exists (the old version goes to the trash). Only when the user wants it.",
    )
    encoding: str = Field(
        "utf-8", description="Text encoding; keep 'utf-8' unless the user asks for another (e.g. 'gbk')."
    )


class AppendParams(_Params):
    path: PathStr = Field(description=f"The text file to add to; created when missing. {_P}")
    content: str = Field(description="The text to add at the end.")
    ensure_newline: bool = Field(True, description="Start on a new line when the file does not end with one.")
    encoding: str | None = Field(
        None, description="Text encoding; default: the file's own (detected), utf-8 for a new file."
    )


class ListParams(_Params):
    path: PathStr = Field("~", description=f"The folder to list (default: the home folder). {_P}")
    pattern: str | None = Field(None, description="Only names matching this glob, e.g. '*.pdf' or '*报告*'.")
    include_hidden: bool = Field(False, description="Also show hidden entries (names starting with '.').")
    max_entries: int = Field(200, ge=1, description="Show at most this many entries.")


class SearchParams(_Params):
    path: PathStr = Field("~", description=f"The folder to search in, including its subfolders. {_P}")
    name: str | None = Field(
        None,
        description="File name glob such as '*.xlsx' or '*合同*'; a plain word matches names that contain it.",
    )
    content: str | None = Field(None, description="Text the file must contain (text files only).")
    regex: bool = Field(False, description="Treat content as a regular expression.")
    case_sensitive: bool = Field(False, description="Match upper/lower case exactly.")
    include_hidden: bool = Field(False, description="Also search hidden folders and files.")
    max_results: int = Field(50, ge=1, description="Stop after this many hits.")


class PathParams(_Params):
    path: PathStr = Field(description=f"The file or folder. {_P}")


class TransferParams(_Params):
    source: PathStr = Field(description=f"The file or folder to take. {_P}")
    destination: PathStr = Field(
        description="The new path, or an existing folder to put it into (keeping its name). " + _P
    )
    overwrite: bool = Field(
        False,
        description="Replace an existing file at the destination (the old one goes to the trash). Folders are never merged.",
    )


class DeleteParams(_Params):
    path: PathStr = Field(description=f"The file or folder to move to the trash. {_P}")
    recursive: bool = Field(False, description="Required to delete a folder that is not empty.")


class MkdirParams(_Params):
    path: PathStr = Field(description=f"The folder to create (with any missing parent folders). {_P}")


class FileTool(BaseTool):
    Config = FileConfig

    # --- read ----------------------------------------------------------------------------------------
    @action(
        "Read a text file and return its content. Detects the encoding (UTF-8, GBK/GB18030, UTF-16...). "
        "Long files are cut with a note: continue with start_line. Binary files (images, PDF, Office) are "
        "only described, not dumped."
    )
    async def read(self, params: ReadParams, ctx: ToolContext) -> ToolResult:
        path = PathGuard(ctx).resolve(params.path, must_exist=True)
        encoding = ops.check_encoding(params.encoding) if params.encoding else None
        got = await asyncio.to_thread(
            ops.read_text,
            path,
            start_line=params.start_line,
            max_lines=params.max_lines,
            max_chars=self.config.max_read_chars,
            encoding=encoding,
        )
        if got.binary_kind is not None:
            return ToolResult.ok(
                f"{path} is a binary file ({got.binary_kind}, {human_size(got.size)}); its content cannot be shown "
                "as text. Use a tool made for that kind of file, or file_info for details.",
                data={"path": str(path), "binary": True, "kind": got.binary_kind, "size": got.size},
            )
        header = f"{path} ({got.encoding}, {human_size(got.size)}), lines {got.first_line}-{got.last_line}:"
        note = ""
        if got.more:
            note = (
                f"\n[truncated: more follows after line {got.last_line}. "
                f"Call file_read with start_line={got.last_line + 1} to continue.]"
            )
        result = ToolResult.ok(
            f"{header}\n{got.text}{note}",
            data={
                "path": str(path),
                "encoding": got.encoding,
                "size": got.size,
                "lines": [got.first_line, got.last_line],
                "truncated": got.more,
            },
        )
        result.truncated = got.more
        return result

    # --- write / append ------------------------------------------------------------------------------
    @action(
        "Create a text file with the given content. Refuses to replace an existing file unless overwrite=true "
        "(then the old version goes to the trash)."
    )
    async def write(self, params: WriteParams, ctx: ToolContext) -> ToolResult:
        path = PathGuard(ctx).resolve(params.path, for_write=True)
        encoding = ops.check_encoding(params.encoding)
        if path.is_dir():
            raise ToolError(f"{path} is a folder. Give a file path inside it, e.g. {path / 'notes.txt'}.")
        if path.exists() and not params.overwrite:
            st = path.stat()
            raise ToolError(
                f"{path} already exists ({human_size(st.st_size)}, modified {ops.stamp(st.st_mtime)}). Nothing was "
                "changed. Choose another name, or call again with overwrite=true if the user wants it replaced."
            )
        data = ops.encode(params.content, encoding)
        trashed = await asyncio.to_thread(ops.atomic_write, path, data, replace_existing=params.overwrite)
        extra = " The previous version was moved to the trash." if trashed else ""
        return ToolResult.ok(
            f"Wrote {human_size(len(data))} to {path} ({encoding}).{extra}",
            data={"path": str(path), "bytes": len(data), "encoding": encoding, "replaced": trashed},
            files=[path],
        )

    @action("Add text to the end of a text file (created when missing), keeping the file's encoding.")
    async def append(self, params: AppendParams, ctx: ToolContext) -> ToolResult:
        path = PathGuard(ctx).resolve(params.path, for_write=True)
        if path.is_dir():
            raise ToolError(f"{path} is a folder; give the path of a text file.")

        def work() -> tuple[int, str, bool]:
            created = not path.exists()
            encoding = ops.appendable_encoding(path, params.encoding)
            text = params.content
            if params.ensure_newline and not created and not ops.ends_with_newline(path, encoding):
                text = "\n" + text
            data = ops.encode(text, encoding)
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "ab") as fh:
                fh.write(data)
            return len(data), encoding, created

        written, encoding, created = await asyncio.to_thread(work)
        verb = "Created" if created else "Appended to"
        return ToolResult.ok(
            f"{verb} {path}: added {human_size(written)} ({encoding}).",
            data={"path": str(path), "bytes": written, "encoding": encoding, "created": created},
            files=[path],
        )

    # --- list / search / info ------------------------------------------------------------------------
    @action("List the files and folders in a folder with sizes and dates. Use it to see what a folder holds.")
    async def list(self, params: ListParams, ctx: ToolContext) -> ToolResult:
        guard = PathGuard(ctx)
        path = guard.resolve(params.path, must_exist=True)
        if not path.is_dir():
            raise ToolError(f"{path} is a file, not a folder. Use file_info or file_read for it.")
        limit = min(params.max_entries, self.config.max_list_entries)
        glob = _as_glob(params.pattern) if params.pattern else None

        def work() -> tuple[list[dict[str, Any]], int, int]:
            import fnmatch

            rows: list[dict[str, Any]] = []
            hidden_protected = 0
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: (not e.is_dir(follow_symlinks=False), e.name.casefold()))
            matched = 0
            for entry in entries:
                if not params.include_hidden and entry.name.startswith("."):
                    continue
                if glob and not fnmatch.fnmatchcase(entry.name.casefold(), glob.casefold()):
                    continue
                if guard.denied_match(Path(entry.path)) is not None:
                    hidden_protected += 1
                    continue
                matched += 1
                if len(rows) >= limit:
                    continue
                row: dict[str, Any] = {"name": entry.name}
                try:
                    st = entry.stat(follow_symlinks=False)
                    if entry.is_symlink():
                        row["type"] = "link"
                    elif entry.is_dir(follow_symlinks=False):
                        row["type"] = "folder"
                    else:
                        row["type"] = "file"
                        row["size"] = st.st_size
                    row["modified"] = ops.stamp(st.st_mtime)
                except OSError:
                    row["type"] = "unreadable"
                rows.append(row)
            return rows, matched, hidden_protected

        rows, matched, protected = await asyncio.to_thread(work)
        lines = [f"{path}: {matched} entries" + (f" matching {params.pattern!r}" if glob else "")]
        for row in rows:
            if row["type"] == "folder":
                lines.append(f"  {row['name']}/  (folder, {row.get('modified', '')})")
            elif row["type"] == "file":
                lines.append(f"  {row['name']}  {human_size(row['size'])}  {row.get('modified', '')}")
            else:
                lines.append(f"  {row['name']}  ({row['type']})")
            hint = fs_hint(row["name"])
            if hint is not None:  # shown as \xNN escapes (pass them back as they are); say what it likely reads
                lines[-1] += f"  [name is not valid UTF-8; probably {hint!r} in a legacy encoding]"
        if matched > len(rows):
            lines.append(f"[showing {len(rows)} of {matched}; use pattern to narrow the list]")
        if protected:
            lines.append(f"[{protected} protected entries (keys, browser data) not shown]")
        if not rows:
            lines.append("  (empty)" if not glob else "  (nothing matches)")
        folders = sum(1 for r in rows if r["type"] == "folder")
        return ToolResult.ok(
            "\n".join(lines),
            data={
                "path": str(path),
                "total": matched,
                "shown": len(rows),
                "folders": folders,
                "files": len(rows) - folders,
            },
        )

    @action(
        "Find files under a folder by name (glob like '*.pdf' or a word in the name) and/or by text they "
        "contain. Searches subfolders; bounded in files scanned and time, so narrow the folder if it stops early."
    )
    async def search(self, params: SearchParams, ctx: ToolContext) -> ToolResult:
        if not params.name and not params.content:
            raise ToolError("Give a name pattern (e.g. '*.docx'), a content text to look for, or both.")
        guard = PathGuard(ctx)
        root = guard.resolve(params.path, must_exist=True)
        if not root.is_dir():
            raise ToolError(f"{root} is a file; search needs a folder. Use file_read to look inside a file.")
        spec = SearchSpec(
            root=root,
            name_glob=_as_glob(params.name) if params.name else None,
            content=params.content or None,
            regex=params.regex,
            case_sensitive=params.case_sensitive,
            include_hidden=params.include_hidden,
            max_results=min(params.max_results, self.config.max_search_results),
            max_files=self.config.max_search_files,
            time_limit_s=self.config.search_time_s,
            max_content_bytes=self.config.max_content_search_bytes,
        )
        try:
            compile_content(spec)
        except re.error as exc:
            raise ToolError(
                f"The regular expression {params.content!r} is invalid: {exc}. Fix it or use regex=false."
            ) from None
        stop = threading.Event()
        progress = threadsafe_progress(ctx)
        ctx.progress(0.0, f"searching {root}")
        try:
            outcome = await asyncio.to_thread(run_search, spec, guard, stop, progress)
        except asyncio.CancelledError:
            stop.set()
            raise
        ctx.progress(1.0, f"{len(outcome.hits)} found")
        lines = [f"{len(outcome.hits)} found under {root} ({outcome.files_scanned} files scanned):"]
        for hit in outcome.hits:
            rel = hit.path.relative_to(root)
            lines.append(f"  {rel}:{hit.line}: {hit.text}" if hit.line is not None else f"  {rel}")
        reasons = {
            "results": f"stopped at {spec.max_results} results; narrow the search to see others",
            "files": f"stopped after {spec.max_files} files; search a smaller folder for complete results",
            "time": f"stopped after {spec.time_limit_s:g} s; search a smaller folder for complete results",
        }
        if outcome.stopped_by in reasons:
            lines.append(f"[{reasons[outcome.stopped_by]}]")
        if outcome.skipped_large:
            lines.append(
                f"[{outcome.skipped_large} files over {human_size(spec.max_content_bytes)} not searched by content]"
            )
        return ToolResult.ok(
            "\n".join(lines),
            data={
                "root": str(root),
                "count": len(outcome.hits),
                "files_scanned": outcome.files_scanned,
                "complete": outcome.stopped_by is None,
                "paths": [str(h.path) for h in outcome.hits[:50]],
            },
        )

    @action("Show details of a file or folder: type, size (a folder's total), dates, encoding, permissions.")
    async def info(self, params: PathParams, ctx: ToolContext) -> ToolResult:
        path = PathGuard(ctx).resolve(params.path, must_exist=True, keep_link=True)
        info = await asyncio.to_thread(ops.describe, path)
        parts = [f"{info['path']}: {info['type']}"]
        if info["type"] == "link":
            parts.append(f"-> {info['target']}")
        if "files" in info:
            more = "" if info["complete"] else " (at least; stopped counting)"
            parts.append(f"{info['files']} files in {info['folders']} subfolders, {info['size_text']}{more}")
        elif "size_text" in info:
            parts.append(info["size_text"])
        for key in ("encoding", "content", "mime"):
            if key in info:
                parts.append(f"{key}: {info[key]}")
        parts.append(f"modified {info['modified']}")
        return ToolResult.ok(", ".join(parts), data=info)

    # --- copy / move / delete / mkdir ----------------------------------------------------------------
    @action(
        "Copy a file or folder. If the destination is an existing folder, the copy goes inside it. Never "
        "replaces an existing file unless overwrite=true; never merges folders."
    )
    async def copy(self, params: TransferParams, ctx: ToolContext) -> ToolResult:
        guard = PathGuard(ctx)
        src = guard.resolve(params.source, must_exist=True)
        target = self._target(guard, src, params)
        trashed = await asyncio.to_thread(self._clear_target, target, params.overwrite, src)
        stop = threading.Event()
        progress = threadsafe_progress(ctx)
        skipped: list[Path] = []
        try:
            count = await asyncio.to_thread(
                ops.copy_any, src, target, stop=stop, progress=progress, skip=guard.skip_protected, skipped=skipped
            )
        except asyncio.CancelledError:
            stop.set()
            raise
        what = f"{count} files" if src.is_dir() else human_size(target.stat().st_size)
        extra = " The file it replaced was moved to the trash." if trashed else ""
        if skipped:
            shown = ", ".join(str(p) for p in skipped[:5]) + (" …" if len(skipped) > 5 else "")
            extra += (
                f" {len(skipped)} protected items (keys, passwords, deleted files or WeClaw's own data) were "
                f"left out: {shown}."
            )
        return ToolResult.ok(
            f"Copied {src} to {target} ({what}).{extra}",
            data={
                "source": str(src),
                "destination": str(target),
                "files": count,
                "replaced": trashed,
                "skipped_protected": len(skipped),
            },
            files=[target] if target.is_file() else [],
        )

    @action(
        "Move or rename a file or folder. If the destination is an existing folder, it goes inside it. Never "
        "replaces an existing file unless overwrite=true; never merges folders."
    )
    async def move(self, params: TransferParams, ctx: ToolContext) -> ToolResult:
        guard = PathGuard(ctx)
        src = guard.resolve(params.source, must_exist=True, for_write=True, keep_link=True)
        await asyncio.to_thread(guard.refuse_protected_inside, src, "moved")
        target = self._target(guard, src, params)
        trashed = await asyncio.to_thread(self._clear_target, target, params.overwrite, src)
        await asyncio.to_thread(shutil.move, str(src), str(target))
        extra = " The file it replaced was moved to the trash." if trashed else ""
        return ToolResult.ok(
            f"Moved {src} to {target}.{extra}",
            data={"source": str(src), "destination": str(target), "replaced": trashed},
            files=[target] if target.is_file() else [],
        )

    @action(
        "Delete a file or folder by moving it to the system trash, where the user can restore it. "
        "A non-empty folder needs recursive=true."
    )
    async def delete(self, params: DeleteParams, ctx: ToolContext) -> ToolResult:
        guard = PathGuard(ctx)
        path = guard.resolve(params.path, must_exist=True, for_write=True, keep_link=True)
        await asyncio.to_thread(guard.refuse_protected_inside, path, "deleted")
        if path.is_dir() and not path.is_symlink():
            with os.scandir(path) as it:
                non_empty = any(True for _ in it)
            if non_empty and not params.recursive:
                count = await asyncio.to_thread(ops.count_files, path)
                raise ToolError(
                    f"{path} is a folder with {count} files in it. Nothing was deleted. If the user wants the "
                    "whole folder removed, call again with recursive=true (it goes to the trash)."
                )
        await asyncio.to_thread(ops.to_trash, path)
        return ToolResult.ok(
            f"Moved {path} to {ops.TRASH_NAME}. It is not permanently deleted; the user can restore it from there.",
            data={"path": str(path), "trashed": True},
        )

    @action("Create a folder (and any missing parent folders).")
    async def mkdir(self, params: MkdirParams, ctx: ToolContext) -> ToolResult:
        path = PathGuard(ctx).resolve(params.path)
        if path.exists() and not path.is_dir():
            raise ToolError(f"{path} exists and is a file, so a folder cannot be created there.")
        if path.is_dir():
            return ToolResult.ok(f"{path} already exists.", data={"path": str(path), "created": False})
        await asyncio.to_thread(path.mkdir, parents=True, exist_ok=True)
        return ToolResult.ok(f"Created folder {path}.", data={"path": str(path), "created": True})

    # --- helpers -------------------------------------------------------------------------------------
    @staticmethod
    def _target(guard: PathGuard, src: Path, params: TransferParams) -> Path:
        dest = guard.resolve(params.destination, for_write=not _is_existing_dir(guard, params.destination))
        target = guard.resolve(str(dest / src.name), for_write=True) if dest.is_dir() else dest
        if target == src:
            raise ToolError(f"Source and destination are the same ({src}). Nothing was done.")
        if src.is_dir() and not src.is_symlink() and is_within(target, src):
            raise ToolError(f"Cannot put the folder {src} inside itself ({target}).")
        if not target.parent.is_dir():
            raise ToolError(f"The folder {target.parent} does not exist. Create it first with file_mkdir.")
        return target

    @staticmethod
    def _clear_target(target: Path, overwrite: bool, src: Path) -> bool:
        """Make way at ``target`` (blocking): refuse, or move an old file to the trash when told to."""
        if not (target.exists() or target.is_symlink()):
            return False
        if target.is_dir():
            raise ToolError(
                f"{target} already exists and is a folder. Nothing was done; folders are never merged. "
                "Choose another destination name."
            )
        if src.is_dir():
            raise ToolError(f"{target} already exists as a file; a folder cannot replace it. Choose another name.")
        if not overwrite:
            raise ToolError(
                f"{target} already exists. Nothing was done. Choose another name, or call again with "
                "overwrite=true if the user wants it replaced (the old file goes to the trash)."
            )
        ops.to_trash(target)
        return True


def _is_existing_dir(guard: PathGuard, raw: str) -> bool:
    with contextlib.suppress(ToolError):
        return guard.resolve(raw).is_dir()
    return False


def _as_glob(pattern: str) -> str:
    """A plain word becomes '*word*'; a pattern with glob characters is used as is."""
    pattern = pattern.strip()
    return pattern if any(c in pattern for c in "*?[") else f"*{pattern}*"
