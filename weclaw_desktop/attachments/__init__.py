"""Files sent with a message (no Qt: used by ``weclaw chat --attach`` and the GUI's composer alike).

- :func:`prepare` reads one file into an :class:`Attachment`: text, code, CSV, Markdown, PDF and Word (.docx)
  become text (capped, with a visible truncation mark); images are checked by their bytes and copied into the
  app's attachment folder (so the chat keeps them when the original moves); anything else is attached by name
  and path only, saying why its content is not included.
- :mod:`~weclaw_desktop.attachments.compose` turns attachments into what the model reads: text blocks in the
  user's message and image parts (``image_url`` data URLs) for models that see images.
"""

from weclaw_desktop.attachments.model import (
    IMAGE_TYPES,
    MAX_IMAGE_BYTES,
    MAX_TEXT_CHARS,
    Attachment,
    AttachmentError,
    AttachmentKind,
)
from weclaw_desktop.attachments.prepare import prepare, prepare_all, store_image_bytes

__all__ = [
    "IMAGE_TYPES",
    "MAX_IMAGE_BYTES",
    "MAX_TEXT_CHARS",
    "Attachment",
    "AttachmentError",
    "AttachmentKind",
    "prepare",
    "prepare_all",
    "store_image_bytes",
]
