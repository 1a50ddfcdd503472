"""Turn an MCP tool result into a :class:`ToolResult` the model can read without noise.

- Text content becomes the output the model reads, structured content becomes ``data``.
- Binary never reaches the model: images, audio and binary resources are saved to the outputs folder
  (listed in ``files``; images also in ``images``, so a vision-capable model can be shown them as image
  parts) and named in the output. Base64 inside structured content (a server that returns the picture
  in its JSON as well) is saved the same way — once per distinct content — and replaced by the file's path.
- Nothing twice: text that only repeats the structured content (the SDK's usual "JSON as text" block,
  one block per list item) is dropped, since the model sees the data.
- Resource links are described by name and URI. Every string that comes back is redacted, so a secret a
  server echoes never reaches the model or the logs.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import json
import mimetypes
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types

from weclaw_desktop.toolkit.base import ToolResult
from weclaw_desktop.toolkit.redact import redact

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_B64 = re.compile(r"^[A-Za-z0-9+/\r\n]+={0,2}$")
_DATA_URI = re.compile(r"^data:([\w.+-]+/[\w.+-]+)?(;[\w=.+-]+)*;base64,(.*)$", re.S)
#: Base64 strings at least this long in structured content are treated as binary.
MIN_BINARY_CHARS = 256
#: The first bytes of common binary formats -> MIME type (for base64 found without a type).
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF", "application/pdf"),
    (b"PK\x03\x04", "application/zip"),
    (b"ID3", "audio/mpeg"),
    (b"OggS", "audio/ogg"),
)


def redact_data(value: Any) -> Any:
    """``value`` with every string redacted (structured content can carry secrets too)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_data(v) for v in value]
    if isinstance(value, dict):
        return {k: redact_data(v) for k, v in value.items()}
    return value


@dataclass
class _Saver:
    label: str
    outputs_dir: Path
    files: list[Path] = field(default_factory=list)
    images: list[Path] = field(default_factory=list)
    by_digest: dict[str, Path] = field(default_factory=dict)
    count: int = 0

    async def save(self, raw: bytes, mime: str) -> Path:
        digest = hashlib.sha256(raw).hexdigest()
        known = self.by_digest.get(digest)
        if known is not None:
            return known
        ext = mimetypes.guess_extension(mime.split(";")[0].strip()) or ".bin"
        self.count += 1
        name = f"{_SAFE.sub('_', self.label)}-{time.strftime('%Y%m%d-%H%M%S')}-{self.count}{ext}"
        path = self.outputs_dir / name

        def write() -> Path:
            self.outputs_dir.mkdir(parents=True, exist_ok=True)
            path.write_bytes(raw)
            return path

        await asyncio.to_thread(write)
        self.by_digest[digest] = path
        self.files.append(path)
        if mime.startswith("image/"):
            self.images.append(path)
        return path


def _decode(b64: str) -> bytes | None:
    try:
        return base64.b64decode("".join(b64.split()), validate=True)
    except (binascii.Error, ValueError):
        return None


def _sniff(raw: bytes) -> str:
    for magic, mime in _MAGIC:
        if raw.startswith(magic):
            return mime
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return "image/webp"
    return "application/octet-stream"


async def _scrub(value: Any, saver: _Saver, mime_hint: str = "") -> Any:
    """``value`` with every base64 blob saved to a file and replaced by a note naming it."""
    if isinstance(value, dict):
        hint = next((str(value[k]) for k in ("mimeType", "mime_type", "mime") if isinstance(value.get(k), str)), "")
        return {k: await _scrub(v, saver, hint) for k, v in value.items()}
    if isinstance(value, list):
        return [await _scrub(v, saver, mime_hint) for v in value]
    if not isinstance(value, str) or len(value) < MIN_BINARY_CHARS:
        return value
    uri = _DATA_URI.match(value)
    payload = uri.group(3) if uri else value
    if not uri and not _B64.match(value):
        return value
    raw = _decode(payload)
    if raw is None:
        return value
    mime = (uri.group(1) if uri else "") or mime_hint or _sniff(raw)
    path = await saver.save(raw, mime)
    return f"[{mime}, {len(raw):,} bytes, saved to {path}]"


async def convert_result(result: types.CallToolResult, *, label: str, outputs_dir: Path) -> ToolResult:
    """``label`` names the server tool in messages and saved file names (``server.tool``)."""
    saver = _Saver(label, outputs_dir)
    texts: list[str] = []
    plain: list[str] = []  # the text blocks as sent (to tell whether they repeat the structured content)
    for block in result.content:
        if isinstance(block, types.TextContent):
            texts.append(block.text)
            plain.append(block.text)
        elif isinstance(block, types.ImageContent | types.AudioContent):
            kind = "image" if isinstance(block, types.ImageContent) else "audio"
            raw = _decode(block.data)
            if raw is None:
                texts.append(f"[{kind}: undecodable data]")
                continue
            path = await saver.save(raw, block.mime_type)
            texts.append(f"[{kind} {block.mime_type} saved to {path}]")
        elif isinstance(block, types.EmbeddedResource):
            res = block.resource
            if isinstance(res, types.TextResourceContents):
                texts.append(f"[resource {res.uri}]\n{res.text}")
            else:
                raw = _decode(res.blob)
                if raw is None:
                    texts.append(f"[resource {res.uri}: undecodable data]")
                    continue
                path = await saver.save(raw, res.mime_type or _sniff(raw))
                texts.append(f"[resource {res.uri} saved to {path}]")
        elif isinstance(block, types.ResourceLink):
            about = f": {block.description}" if block.description else ""
            texts.append(f"[link {block.name} <{block.uri}>{about}]")
        else:  # a content type from a newer protocol revision
            texts.append(f"[{getattr(block, 'type', 'unknown')} content not shown]")
    data: Any = None
    structured = result.structured_content
    if structured is not None and not _wraps_text(plain, structured):  # {"result": "<the text>"} says it once
        data = redact_data(await _scrub(structured, saver))
        if _repeats(plain, structured):
            texts = [t for t in texts if t not in plain]  # the text only repeats the data the model sees
    output = redact("\n".join(t for t in texts if t))
    if result.is_error:
        message = output or "the server reported an error without details"
        return ToolResult.fail(f"{label} failed: {message}", data=data)
    return ToolResult.ok(output, data=data, files=saver.files, images=saver.images)


def _wraps_text(texts: list[str], data: Any) -> bool:
    """Whether the structured content is only the one text block again (``{"result": "<text>"}``)."""
    if len(texts) != 1 or not isinstance(data, dict) or len(data) != 1:
        return False
    wrapped = next(iter(data.values()))
    return isinstance(wrapped, str) and wrapped.strip() == texts[0].strip()


def _repeats(texts: list[str], data: Any) -> bool:
    """Whether the text blocks say nothing but the structured content (as JSON, whole or item by item)."""
    if not texts:
        return False
    parsed: list[Any] = []
    for text in texts:
        try:
            parsed.append(json.loads(text))
        except ValueError:
            return False
    wrapped = data.get("result") if isinstance(data, dict) and len(data) == 1 else None
    candidates = [data] + ([wrapped] if wrapped is not None else [])
    whole = parsed[0] if len(parsed) == 1 else parsed
    return any(whole == c or parsed == c for c in candidates)
