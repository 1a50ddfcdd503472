"""The doc_writer tool: write documents the model composed in Markdown to .md or Word .docx files.

Word output uses the optional dependency python-docx (``pip install weclaw-desktop[docs]``); tools.json's
``action_requires`` hides the docx action with a clear diagnostic when it is missing. Files go to the
outputs folder unless a path is given, and an existing file is never replaced without overwrite=true.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.toolkit.argkinds import PathStr
from weclaw_desktop.toolkit.base import BaseTool, ToolContext, ToolError, ToolResult, action
from weclaw_desktop.tools.common import free_name, human_size
from weclaw_desktop.tools.file_ops import atomic_write
from weclaw_desktop.tools.pathguard import RELATIVE_NOTE, PathGuard


class DocWriterConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    east_asia_font: str = Field(
        "Microsoft YaHei", description="font for Chinese text in .docx files ('' = Word's default)"
    )
    max_chars: int = Field(2_000_000, ge=1000, description="longest document accepted")


class _DocParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: str = Field(
        min_length=1,
        description="The whole document in Markdown: # headings, **bold**, *italic*, - bullets, 1. numbered "
        "lists, | tables |, ``` code blocks ```.",
    )
    path: PathStr | None = Field(
        None, description=f"Where to save it. Default: the outputs folder, named after the title. {RELATIVE_NOTE}"
    )
    title: str | None = Field(None, description="Document title (also used for the default file name).")
    overwrite: bool = Field(False, description="Replace an existing file (the old one goes to the trash).")


class MarkdownParams(_DocParams):
    pass


class DocxParams(_DocParams):
    pass


class DocWriterTool(BaseTool):
    Config = DocWriterConfig

    @action("Save a document as a Markdown (.md) file. Use it for notes, reports and READMEs in plain text.")
    async def markdown(self, params: MarkdownParams, ctx: ToolContext) -> ToolResult:
        self._check(params)
        text = params.content
        if params.title and not text.lstrip().startswith("# "):
            text = f"# {params.title}\n\n{text}"
        if not text.endswith("\n"):
            text += "\n"
        path = await self._target(params, ctx, ".md")
        data = text.encode("utf-8")
        replaced = await asyncio.to_thread(atomic_write, path, data, replace_existing=params.overwrite)
        return self._done(path, len(data), replaced, "Markdown")

    @action(
        "Save a document as a Word (.docx) file, written from Markdown: headings, paragraphs, bold/italic, "
        "bullet and numbered lists, tables and code blocks become real Word formatting."
    )
    async def docx(self, params: DocxParams, ctx: ToolContext) -> ToolResult:
        self._check(params)
        try:
            from weclaw_desktop.tools.md_docx import render_docx
        except ImportError:
            raise ToolError(
                "Word output needs the python-docx package (pip install python-docx). Use doc_writer_markdown "
                "instead, or ask the user to install it."
            ) from None
        path = await self._target(params, ctx, ".docx")
        font = self.config.east_asia_font

        def build() -> bytes:
            import io

            doc = render_docx(params.content, title=params.title, east_asia_font=font)
            buf = io.BytesIO()
            doc.save(buf)
            return buf.getvalue()

        data = await asyncio.to_thread(build)
        replaced = await asyncio.to_thread(atomic_write, path, data, replace_existing=params.overwrite)
        return self._done(path, len(data), replaced, "Word")

    # --- helpers -------------------------------------------------------------------------------------
    def _check(self, params: _DocParams) -> None:
        if len(params.content) > self.config.max_chars:
            raise ToolError(f"The document is longer than {self.config.max_chars} characters; split it up.")

    @staticmethod
    async def _target(params: _DocParams, ctx: ToolContext, suffix: str) -> Path:
        if params.path:
            path = PathGuard(ctx).resolve(params.path, for_write=True)
            if path.suffix.lower() != suffix:
                if path.suffix.lower() in (".md", ".docx", ".doc", ".markdown", ".txt"):
                    raise ToolError(f"{path.name} does not end in {suffix}; use a {suffix} name for this action.")
                path = PathGuard(ctx).resolve(str(path.with_name(path.name + suffix)), for_write=True)
            if await asyncio.to_thread(path.is_dir):
                raise ToolError(f"{path} is a folder; give a file name ending in {suffix}.")
            if await asyncio.to_thread(path.exists) and not params.overwrite:
                raise ToolError(
                    f"{path} already exists. Nothing was written. Choose another name, or call again with "
                    "overwrite=true if the user wants it replaced (the old one goes to the trash)."
                )
            return path
        name = _file_stem(params.title or _first_heading(params.content) or "document")
        return await asyncio.to_thread(free_name, Path(ctx.outputs_dir) / f"{name}{suffix}")

    @staticmethod
    def _done(path: Path, size: int, replaced: bool, kind: str) -> ToolResult:
        extra = " The previous version was moved to the trash." if replaced else ""
        return ToolResult.ok(
            f"Saved the {kind} document to {path} ({human_size(size)}).{extra}",
            data={"path": str(path), "bytes": size, "replaced": replaced},
            files=[path],
        )


def _first_heading(markdown: str) -> str | None:
    for line in markdown.splitlines():
        m = re.match(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", line)
        if m:
            return m.group(1)
    return None


def _file_stem(text: str) -> str:
    """A safe file name from a title: keeps letters (including Chinese), digits, spaces, - and _."""
    cleaned = re.sub(r"[\\/:*?\"<>|\x00-\x1f]+", " ", text)
    cleaned = re.sub(r"[*_`#\[\]]", "", cleaned)
    cleaned = re.sub(r"\s+", " ", cleaned).strip(" .")
    return cleaned[:80].rstrip(" .") or "document"
