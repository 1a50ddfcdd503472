"""The archive tool: zip files and folders, unzip safely, list a zip's entries.

Zip: several files and folders into one archive ("压缩 A 和 B 到同一个 X.zip"), protected folders skipped,
written through a temp file. Unzip: zip-slip and zip-bomb checks before anything is written (see
archive_ops), never overwrites without overwrite=true. Archives and extracted folders go to the outputs
folder unless a path is given.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.toolkit.argkinds import PathStr
from weclaw_desktop.toolkit.base import BaseTool, ToolContext, ToolError, ToolResult, action
from weclaw_desktop.tools import archive_ops as ops
from weclaw_desktop.tools.common import free_name, human_size, threadsafe_progress
from weclaw_desktop.tools.file_ops import to_trash
from weclaw_desktop.tools.pathguard import RELATIVE_NOTE, PathGuard

MAX_LISTED_FILES = 50  # extracted files offered in the UI / to the phone; more are only counted


class ArchiveConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_entries: int = Field(100_000, ge=1, description="an archive with more entries is not extracted")
    max_total_bytes: int = Field(8 * 1024**3, ge=1, description="an archive unpacking to more is not extracted")
    max_ratio: float = Field(200.0, gt=1, description="an entry expanding more than this many times is a zip bomb")
    list_limit: int = Field(200, ge=1, description="entries one list shows at most")


class ZipParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sources: list[PathStr] = Field(
        min_length=1, description=f"Files and folders to put into the one archive. {RELATIVE_NOTE}"
    )
    output: PathStr | None = Field(
        None,
        description="Path of the .zip to create. Default: the outputs folder, named after the first source.",
    )
    overwrite: bool = Field(False, description="Replace an existing archive at output (the old one goes to the trash).")


class UnzipParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    archive: PathStr = Field(description=f"The .zip file to extract. {RELATIVE_NOTE}")
    destination: PathStr | None = Field(
        None, description="Folder to extract into (created if missing). Default: a new folder in the outputs folder."
    )
    overwrite: bool = Field(
        False, description="Replace files that already exist in the destination (old ones go to the trash)."
    )


class ListParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    archive: PathStr = Field(description=f"The .zip file to look into. {RELATIVE_NOTE}")


class ArchiveTool(BaseTool):
    Config = ArchiveConfig

    @action(
        "Create a zip archive from one or more files and folders (all into the same archive). Use it to "
        "compress or bundle files. Protected folders (keys, browser data) are left out."
    )
    async def zip(self, params: ZipParams, ctx: ToolContext) -> ToolResult:
        guard = PathGuard(ctx)
        resolved = [guard.resolve(raw, must_exist=True) for raw in params.sources]
        output = _zip_output(guard, resolved, params, ctx)
        sources = _named_sources(resolved)
        stop = threading.Event()
        progress = threadsafe_progress(ctx)

        def work() -> tuple[int, int, int]:
            items, skipped, total = ops.collect(sources, guard, skip=output)
            count = ops.create_zip(output, items, total, stop=stop, progress=progress)
            return count, skipped, total

        replaced = False
        if await asyncio.to_thread(output.is_dir):
            raise ToolError(f"{output} is a folder; give a file name ending in .zip.")
        exists = await asyncio.to_thread(output.exists)
        if params.output and exists:
            if not params.overwrite:
                raise ToolError(
                    f"{output} already exists. Nothing was done. Choose another name, or call again with "
                    "overwrite=true if the user wants it replaced (the old one goes to the trash)."
                )
            await asyncio.to_thread(to_trash, output)
            replaced = True
        ctx.progress(0.0, f"packing into {output.name}")
        try:
            count, skipped, total = await asyncio.to_thread(work)
        except asyncio.CancelledError:
            stop.set()
            raise
        size = await asyncio.to_thread(lambda: output.stat().st_size)
        ctx.progress(1.0, f"{output.name}: {count} files")
        notes = f" {skipped} protected items were left out." if skipped else ""
        notes += " The previous archive was moved to the trash." if replaced else ""
        return ToolResult.ok(
            f"Created {output} with {count} files from {len(sources)} source(s): {human_size(total)} -> "
            f"{human_size(size)}.{notes}",
            data={"archive": str(output), "files": count, "bytes_in": total, "bytes_out": size, "skipped": skipped},
            files=[output],
        )

    @action(
        "Extract a zip archive into a folder. Refuses archives with entries escaping the folder (zip-slip), "
        "zip bombs, and overwriting existing files unless overwrite=true."
    )
    async def unzip(self, params: UnzipParams, ctx: ToolContext) -> ToolResult:
        guard = PathGuard(ctx)
        archive = guard.resolve(params.archive, must_exist=True)
        if params.destination:
            dest = guard.resolve(params.destination, for_write=False)
        else:
            base = Path(ctx.outputs_dir) / _stem(archive)
            dest = await asyncio.to_thread(free_name, base)
        if await asyncio.to_thread(lambda: dest.exists() and not dest.is_dir()):
            raise ToolError(f"{dest} is a file; the destination must be a folder.")
        limits = ops.Limits(self.config.max_entries, self.config.max_total_bytes, self.config.max_ratio)
        stop = threading.Event()
        progress = threadsafe_progress(ctx)
        ctx.progress(0.0, f"extracting {archive.name}")
        try:
            got = await asyncio.to_thread(
                ops.extract_zip,
                archive,
                dest,
                guard=guard,
                limits=limits,
                overwrite=params.overwrite,
                stop=stop,
                progress=progress,
                trash=to_trash,
            )
        except asyncio.CancelledError:
            stop.set()
            raise
        ctx.progress(1.0, f"extracted {got.files} files")
        extra = (
            f" {len(got.replaced)} existing files were replaced (old versions in the trash)." if got.replaced else ""
        )
        return ToolResult.ok(
            f"Extracted {got.files} files ({human_size(got.bytes)}) from {archive.name} into {dest}.{extra}",
            data={"destination": str(dest), "files": got.files, "folders": got.folders, "bytes": got.bytes},
            files=got.written[:MAX_LISTED_FILES],
        )

    @action("List the entries of a zip archive (names, sizes, dates) without extracting it.")
    async def list(self, params: ListParams, ctx: ToolContext) -> ToolResult:
        archive = PathGuard(ctx).resolve(params.archive, must_exist=True)
        listing = await asyncio.to_thread(ops.list_zip, archive)
        limit = self.config.list_limit
        lines = [
            f"{archive.name}: {len(listing.entries)} entries, {human_size(listing.total_size)} unpacked, "
            f"{human_size(listing.compressed_size)} packed"
        ]
        for entry in listing.entries[:limit]:
            if entry.is_dir:
                lines.append(f"  {entry.name}")
            else:
                flags = " [encrypted]" if entry.encrypted else ""
                flags += f" [UNSAFE: {entry.unsafe}]" if entry.unsafe else ""
                lines.append(f"  {entry.name}  {human_size(entry.size)}  {entry.modified}{flags}")
        if len(listing.entries) > limit:
            lines.append(f"[showing {limit} of {len(listing.entries)} entries]")
        unsafe = [e.name for e in listing.entries if e.unsafe]
        if unsafe:
            lines.append(f"[{len(unsafe)} entries would escape the target folder; unzip will refuse this archive]")
        return ToolResult.ok(
            "\n".join(lines),
            data={
                "archive": str(archive),
                "entries": len(listing.entries),
                "unpacked_bytes": listing.total_size,
                "packed_bytes": listing.compressed_size,
                "encrypted": any(e.encrypted for e in listing.entries),
                "unsafe_entries": unsafe[:20],
            },
        )


def _zip_output(guard: PathGuard, sources: list[Path], params: ZipParams, ctx: ToolContext) -> Path:
    if params.output:
        output = guard.resolve(params.output, for_write=True)
        if output.suffix.lower() != ".zip":
            output = guard.resolve(str(output.with_name(output.name + ".zip")), for_write=True)
    else:
        stem = sources[0].stem or sources[0].name or "archive"
        output = free_name(Path(ctx.outputs_dir) / f"{stem}.zip")
    if output in sources:
        raise ToolError(f"{output} is one of the sources; choose another name for the archive.")
    return output  # an archive inside a source folder is fine: it is skipped while packing


def _named_sources(paths: list[Path]) -> list[ops.Source]:
    """Top-level names in the archive; two sources with the same name get ' (2)'."""
    used: set[str] = set()
    out: list[ops.Source] = []
    for path in paths:
        name = path.name or "root"
        candidate, n = name, 2
        while candidate.casefold() in used:
            stem, dot, ext = name.partition(".") if path.is_file() else (name, "", "")
            candidate = f"{stem} ({n}){dot}{ext}"
            n += 1
        used.add(candidate.casefold())
        out.append(ops.Source(path, candidate))
    return out


def _stem(path: Path) -> str:
    return path.name[: -len(path.suffix)] if path.suffix else path.name
