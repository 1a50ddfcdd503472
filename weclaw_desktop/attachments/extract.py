"""Text out of a file: plain text and code (any encoding users have), CSV/TSV, PDF (pypdf) and Word (.docx).

Each extractor returns the whole text it read (the caller caps it) and a note when something was left out.
Blocking: call through ``asyncio.to_thread`` (``prepare_all`` does).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from weclaw_desktop.attachments.model import MAX_PDF_PAGES, MAX_READ_BYTES

#: Suffixes read as text without sniffing (anything else that decodes cleanly is text too).
TEXT_SUFFIXES = frozenset(
    [
        ".txt",
        ".md",
        ".markdown",
        ".rst",
        ".csv",
        ".tsv",
        ".json",
        ".jsonl",
        ".yaml",
        ".yml",
        ".toml",
        ".ini",
        ".cfg",
        ".conf",
        ".log",
        ".xml",
        ".html",
        ".htm",
        ".css",
        ".py",
        ".pyi",
        ".js",
        ".mjs",
        ".ts",
        ".tsx",
        ".jsx",
        ".java",
        ".kt",
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".hpp",
        ".cs",
        ".go",
        ".rs",
        ".rb",
        ".php",
        ".swift",
        ".m",
        ".scala",
        ".sh",
        ".bash",
        ".zsh",
        ".ps1",
        ".bat",
        ".sql",
        ".r",
        ".lua",
        ".pl",
        ".dart",
        ".vue",
        ".svelte",
        ".tex",
        ".srt",
        ".env.example",
        ".gitignore",
        ".dockerfile",
    ]
)
WORD_MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


class NotText(ValueError):
    """The file has no text this module can read (binary, unknown format); the message says what it is."""


def read_text(path: Path) -> str:
    """A text file in whatever encoding it is in (UTF-8/16/32 with BOM, GBK/GB18030, legacy code pages)."""
    from weclaw_desktop.tools.textio import decode_bytes, sniff_file

    sniffed = sniff_file(path)
    if sniffed.encoding is None and path.suffix.lower() not in TEXT_SUFFIXES:
        raise NotText(sniffed.binary_kind or "binary data")
    data = path.read_bytes()[:MAX_READ_BYTES]
    text, _encoding = decode_bytes(data, sniffed.encoding)
    return text.replace("\r\n", "\n")


def read_pdf(path: Path) -> tuple[str, str]:
    """The text layer of a PDF, page by page ("--- page 3 ---"). (text, note)."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted and not reader.decrypt(""):
            return "", "the PDF is password-protected, so its text could not be read"
        pages = reader.pages
        count = len(pages)
        parts: list[str] = []
        for i in range(min(count, MAX_PDF_PAGES)):
            # text placed word by word (Qt, many generators) comes out with tabs between words
            text = "\n".join(" ".join(line.split()) for line in (pages[i].extract_text() or "").splitlines()).strip()
            if text:
                parts.append(f"--- page {i + 1} ---\n{text}")
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        return "", f"the PDF could not be read ({type(exc).__name__}: {str(exc)[:120]})"
    note = ""
    if not parts:
        note = "the PDF has no text layer (a scan or images only); no text could be read"
    elif count > MAX_PDF_PAGES:
        note = f"only the first {MAX_PDF_PAGES} of {count} pages were read"
    return "\n\n".join(parts), note


def read_docx(path: Path) -> tuple[str, str]:
    """The paragraphs and table cells of a Word document, in document order. (text, note).

    A .docx is a zip of XML: ``word/document.xml`` is read with lxml (a dependency already), paragraph by
    paragraph; table rows become " | "-separated lines. Headers, footers, comments and text boxes are left out.
    """
    from lxml import etree

    try:
        with zipfile.ZipFile(path) as zf:
            info = zf.getinfo("word/document.xml")
            if info.file_size > MAX_READ_BYTES:
                return "", "the document is too large to read"
            xml = zf.read(info)
        root = etree.fromstring(xml, parser=etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False))
    except (zipfile.BadZipFile, KeyError, etree.XMLSyntaxError, OSError) as exc:
        return "", f"the Word document could not be read ({type(exc).__name__})"
    body = root.find(f"{_W}body")
    if body is None:
        return "", "the Word document has no body"
    lines: list[str] = []
    for block in body:
        if block.tag == f"{_W}p":
            lines.append(_paragraph(block))
        elif block.tag == f"{_W}tbl":
            for row in block.iter(f"{_W}tr"):
                cells = [" ".join(_paragraph(p) for p in cell.iter(f"{_W}p")).strip() for cell in row.iter(f"{_W}tc")]
                lines.append(" | ".join(cells))
    text = "\n".join(lines).strip()
    return text, "" if text else "the Word document has no text"


def _paragraph(p: object) -> str:
    out: list[str] = []
    for node in p.iter():  # type: ignore[attr-defined]
        tag = node.tag
        if tag == f"{_W}t" and node.text:
            out.append(node.text)
        elif tag == f"{_W}tab":
            out.append("\t")
        elif tag in (f"{_W}br", f"{_W}cr"):
            out.append("\n")
    return "".join(out)
