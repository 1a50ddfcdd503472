"""What the model reads of attachments: text blocks in the user's message, images as ``image_url`` parts.

A text attachment becomes a block after the user's own words::

    [Attached file: budget.csv (text/csv, 12.3 KB)]
    ...the text...
    [Truncated: the first 40,000 of 182,344 characters are included.]
    [End of budget.csv]

An image becomes an ``{"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}`` part (OpenAI's
chat format, which every OpenAI-compatible vision endpoint accepts) when the model can see images; otherwise
a line saying it was not shown. A file that has no readable text is named with its path and why.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from weclaw_desktop.attachments.model import MAX_IMAGE_BYTES, Attachment
from weclaw_desktop.attachments.prepare import sniff_image

Content = str | list[dict[str, Any]]


@dataclass(frozen=True)
class ImageRef:
    name: str
    path: str
    mime: str = ""


def size_text(n: int) -> str:
    for unit, scale in (("MB", 1_048_576), ("KB", 1024)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def attachment_block(att: Attachment) -> str:
    head = f"[Attached file: {att.name} ({att.mime or 'unknown type'}, {size_text(att.size)})]"
    if att.kind == "image":
        return f"[Attached image: {att.name}]"
    if att.kind == "file" or not att.text:
        why = att.note or "its content is not included"
        return f"{head}\nIts content is not included: {why}. The file is at {att.path}."
    lines = [head, att.text]
    if att.truncated:
        lines.append(f"[Truncated: the first {len(att.text):,} of {att.chars:,} characters are included.]")
    if att.note:
        lines.append(f"[Note: {att.note}.]")
    lines.append(f"[End of {att.name}]")
    return "\n".join(lines)


def user_text(text: str, attachments: Sequence[Attachment]) -> str:
    """The user's words followed by a block per attachment (images are named; their pixels go as parts)."""
    blocks = [attachment_block(a) for a in attachments]
    return "\n\n".join([text, *blocks]) if blocks else text


def images_of(attachments: Sequence[Attachment]) -> list[ImageRef]:
    return [ImageRef(a.name, a.path, a.mime) for a in attachments if a.kind == "image"]


def tool_images(files: Sequence[str]) -> list[ImageRef]:
    """The files of a tool result that are images a model can be shown (checked by their bytes and size)."""
    out: list[ImageRef] = []
    for name in files:
        path = Path(name)
        try:
            if not path.is_file() or path.stat().st_size > MAX_IMAGE_BYTES:
                continue
            with open(path, "rb") as fh:
                mime = sniff_image(fh.read(16))
        except OSError:
            continue
        if mime:
            out.append(ImageRef(path.name, str(path), mime))
    return out


def image_part(image: ImageRef) -> dict[str, Any] | None:
    """The ``image_url`` part of one image (None when the file is gone or no longer an image)."""
    try:
        data = Path(image.path).read_bytes()
    except OSError:
        return None
    mime = sniff_image(data[:16])
    if not mime or len(data) > MAX_IMAGE_BYTES:
        return None
    url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
    return {"type": "image_url", "image_url": {"url": url}}


def with_images(text: str, images: Sequence[ImageRef], *, show: bool, model: str = "") -> Content:
    """``text`` plus the images as parts when ``show``; otherwise the text with a line per image not shown."""
    if not images:
        return text
    if not show:
        who = f"the model {model}" if model else "this model"
        missing = "\n".join(f"[Image {i.name} was not shown: {who} does not accept images.]" for i in images)
        return f"{text}\n\n{missing}" if text else missing
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for image in images:
        part = image_part(image)
        if part is None:
            parts.append({"type": "text", "text": f"[Image {image.name} is no longer available.]"})
        else:
            parts.append(part)
    return parts
