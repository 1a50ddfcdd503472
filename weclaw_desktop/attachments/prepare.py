"""One file -> one :class:`Attachment` (kind by content, text extracted and capped, images copied)."""

from __future__ import annotations

import hashlib
import mimetypes
import os
import tempfile
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from weclaw_desktop.attachments import extract
from weclaw_desktop.attachments.model import (
    IMAGE_TYPES,
    MAX_IMAGE_BYTES,
    MAX_MESSAGE_CHARS,
    MAX_READ_BYTES,
    MAX_TEXT_CHARS,
    Attachment,
    AttachmentError,
)


def sniff_image(head: bytes) -> str:
    """The image type of these first bytes ('' when they are not an image every vision endpoint takes)."""
    for mime, signatures in IMAGE_TYPES.items():
        if any(head.startswith(sig) for sig in signatures):
            if mime == "image/webp" and head[8:12] != b"WEBP":
                continue
            return mime
    return ""


def cap(text: str, limit: int) -> tuple[str, bool]:
    """``text`` cut to ``limit`` characters at a line end when one is near (CSV rows stay whole)."""
    if len(text) <= limit:
        return text, False
    cut = text.rfind("\n", max(0, limit - 2_000), limit)
    return text[: cut if cut > 0 else limit], True


def prepare(path: str | Path, *, store_dir: Path, max_chars: int = MAX_TEXT_CHARS) -> Attachment:
    """Read ``path``. Raises :class:`AttachmentError` when it cannot be attached at all."""
    p = Path(path).expanduser()
    try:
        st = p.stat()
    except OSError as exc:
        raise AttachmentError(f"{p}: {exc.strerror or 'cannot be read'}") from exc
    if not p.is_file():
        raise AttachmentError(f"{p} is not a file")
    name = p.name
    mime = mimetypes.guess_type(name)[0] or ""
    try:
        with open(p, "rb") as fh:
            head = fh.read(16)
    except OSError as exc:
        raise AttachmentError(f"{p}: {exc.strerror or 'cannot be read'}") from exc
    image = sniff_image(head)
    if image:
        if st.st_size > MAX_IMAGE_BYTES:
            return Attachment(name, "file", image, st.st_size, str(p), note=_too_big_image(st.st_size))
        return store_image_bytes(p.read_bytes(), store_dir=store_dir, name=name, mime=image)
    if st.st_size > MAX_READ_BYTES:
        return Attachment(name, "file", mime, st.st_size, str(p), note="the file is too large to read into the chat")
    suffix = p.suffix.lower()
    note = ""
    try:
        if head.startswith(b"%PDF") or suffix == ".pdf":
            text, note = extract.read_pdf(p)
            mime = "application/pdf"
        elif suffix == ".docx" or mime == extract.WORD_MIME:
            text, note = extract.read_docx(p)
            mime = extract.WORD_MIME
        else:
            text = extract.read_text(p)
            mime = mime or "text/plain"
    except extract.NotText as exc:
        return Attachment(name, "file", mime, st.st_size, str(p), note=f"not a text document ({exc})")
    except OSError as exc:
        raise AttachmentError(f"{p}: {exc.strerror or 'cannot be read'}") from exc
    if not text:
        return Attachment(name, "file", mime, st.st_size, str(p), note=note or "the file is empty")
    kept, truncated = cap(text, max_chars)
    return Attachment(name, "text", mime, st.st_size, str(p), kept, len(text), truncated, note)


def prepare_all(
    paths: Iterable[str | Path],
    *,
    store_dir: Path,
    max_chars: int = MAX_TEXT_CHARS,
    total_chars: int = MAX_MESSAGE_CHARS,
) -> list[Attachment]:
    """Every file of one message; text beyond ``total_chars`` for them all is cut (each is marked)."""
    out: list[Attachment] = []
    left = total_chars
    for path in paths:
        att = prepare(path, store_dir=store_dir, max_chars=max_chars)
        if att.kind == "text":
            kept, cut = cap(att.text, max(0, left))
            if cut:
                att = replace(att, text=kept, truncated=True)
            left -= len(att.text)
        out.append(att)
    return out


def store_image_bytes(data: bytes, *, store_dir: Path, name: str = "", mime: str = "") -> Attachment:
    """Keep an image in the app's attachment folder (named by its SHA-256, so a pasted image is stored once)."""
    mime = mime or sniff_image(data[:16])
    if not mime:
        raise AttachmentError(f"{name or 'the pasted data'} is not a PNG, JPEG, GIF or WebP image")
    if len(data) > MAX_IMAGE_BYTES:
        raise AttachmentError(_too_big_image(len(data)))
    digest = hashlib.sha256(data).hexdigest()[:24]
    ext = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}[mime]
    store_dir.mkdir(parents=True, exist_ok=True)
    target = store_dir / f"{digest}{ext}"
    if not target.exists():
        fd, tmp = tempfile.mkstemp(dir=store_dir, suffix=".part")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return Attachment(name or f"image{ext}", "image", mime, len(data), str(target))


def _too_big_image(size: int) -> str:
    return f"the image is {size / 1_048_576:.1f} MB; images up to {MAX_IMAGE_BYTES // 1_048_576} MB can be sent"
