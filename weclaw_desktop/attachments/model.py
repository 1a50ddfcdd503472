"""The attachment record and its limits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

AttachmentKind = Literal["text", "image", "file"]

#: Text taken from one attachment into the model's context (about 10k tokens); the rest is cut with a mark.
MAX_TEXT_CHARS = 40_000
#: Text of all attachments of one message together.
MAX_MESSAGE_CHARS = 120_000
#: Largest file read for its text (a bigger one is attached by path only).
MAX_READ_BYTES = 50 * 1024 * 1024
#: Largest image sent to a model (providers accept 10-20 MB; base64 adds a third).
MAX_IMAGE_BYTES = 10 * 1024 * 1024
#: PDF pages read at most (a 2,000-page manual would otherwise take seconds for text that is cut anyway).
MAX_PDF_PAGES = 300

#: Image types every vision endpoint accepts, by their first bytes.
IMAGE_TYPES: dict[str, tuple[bytes, ...]] = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),  # + "WEBP" at offset 8, checked in images.sniff
}


class AttachmentError(ValueError):
    """A file cannot be attached at all (missing, a folder, unreadable); the message says why, for people."""


@dataclass(frozen=True)
class Attachment:
    name: str  # the file name shown on the chip
    kind: AttachmentKind
    mime: str = ""
    size: int = 0  # bytes of the file
    path: str = ""  # the original file (text, file) or the app's copy (image)
    text: str = ""  # extracted text (already capped)
    chars: int = 0  # length of the whole extracted text before the cap
    truncated: bool = False
    note: str = ""  # why nothing (or not everything) was read, in English for the model; '' when all is well

    @property
    def is_image(self) -> bool:
        return self.kind == "image"
