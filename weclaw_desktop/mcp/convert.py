"""Turn an MCP tool result into a :class:`ToolResult`.

Text content becomes the output the model reads, structured content becomes ``data``; images, audio and
binary resources are saved to the outputs folder (listed in ``files``, so the user can open them or send
them to the phone) and described in the output; resource links are described by name and URI. Every
string that comes back is redacted, so a secret a server echoes never reaches the model or the logs.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import mimetypes
import re
import time
from pathlib import Path
from typing import Any

import mcp_types as types

from weclaw_desktop.toolkit.base import ToolResult
from weclaw_desktop.toolkit.redact import redact

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def redact_data(value: Any) -> Any:
    """``value`` with every string redacted (structured content can carry secrets too)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_data(v) for v in value]
    if isinstance(value, dict):
        return {k: redact_data(v) for k, v in value.items()}
    return value


async def convert_result(result: types.CallToolResult, *, label: str, outputs_dir: Path) -> ToolResult:
    """``label`` names the server tool in messages and saved file names (``server.tool``)."""
    texts: list[str] = []
    files: list[Path] = []
    for index, block in enumerate(result.content):
        if isinstance(block, types.TextContent):
            texts.append(block.text)
        elif isinstance(block, types.ImageContent | types.AudioContent):
            kind = "image" if isinstance(block, types.ImageContent) else "audio"
            path = await _save(block.data, block.mime_type, label, index, outputs_dir)
            texts.append(f"[{kind} {block.mime_type} saved to {path}]" if path else f"[{kind}: undecodable data]")
            if path:
                files.append(path)
        elif isinstance(block, types.EmbeddedResource):
            res = block.resource
            if isinstance(res, types.TextResourceContents):
                texts.append(f"[resource {res.uri}]\n{res.text}")
            else:
                path = await _save(res.blob, res.mime_type or "application/octet-stream", label, index, outputs_dir)
                texts.append(f"[resource {res.uri} saved to {path}]" if path else f"[resource {res.uri}]")
                if path:
                    files.append(path)
        elif isinstance(block, types.ResourceLink):
            about = f": {block.description}" if block.description else ""
            texts.append(f"[link {block.name} <{block.uri}>{about}]")
        else:  # a content type from a newer protocol revision
            texts.append(f"[{getattr(block, 'type', 'unknown')} content not shown]")
    data = redact_data(result.structured_content) if result.structured_content is not None else None
    output = redact("\n".join(t for t in texts if t))
    if data is not None and _repeats(texts, data):
        output = ""  # the text only repeats the structured content, which the model sees as data
    if result.is_error:
        message = output or "the server reported an error without details"
        return ToolResult.fail(f"{label} failed: {message}", data=data)
    return ToolResult.ok(output, data=data, files=files)


def _repeats(texts: list[str], data: Any) -> bool:
    if len(texts) != 1:
        return False
    try:
        parsed = json.loads(texts[0])
    except ValueError:
        return False
    wrapped = data.get("result") if isinstance(data, dict) and len(data) == 1 else None
    return bool(parsed == data or (wrapped is not None and parsed == wrapped))


async def _save(b64: str, mime: str, label: str, index: int, outputs_dir: Path) -> Path | None:
    try:
        raw = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError):
        return None
    ext = mimetypes.guess_extension(mime.split(";")[0].strip()) or ".bin"
    name = f"{_SAFE.sub('_', label)}-{time.strftime('%Y%m%d-%H%M%S')}-{index}{ext}"
    path = outputs_dir / name

    def write() -> Path:
        outputs_dir.mkdir(parents=True, exist_ok=True)
        path.write_bytes(raw)
        return path

    return await asyncio.to_thread(write)
