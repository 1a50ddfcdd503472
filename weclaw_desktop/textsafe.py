"""Text that is always valid Unicode, and file names that survive the round trip through the model.

Two kinds of odd text reach the app:

- **Lone surrogates** (U+D800..U+DFFF on their own): a model or server that splits strings by UTF-16 code
  units, a tool that decoded bytes with ``surrogateescape``. They cannot be encoded as UTF-8, so SQLite,
  the HTTP client and the terminal refuse them. :func:`clean_text` joins halves that form a pair and
  turns the rest into U+FFFD (the replacement character), once, where text enters the app.
- **File names that are not valid in the file-system encoding** (GBK bytes from an old zip on Linux).
  Python hands them over with ``surrogateescape`` (byte 0xB1 becomes U+DCB1). :func:`fs_display` shows
  such a name with ``\\xB1``-style escapes, which are plain ASCII the model can copy back, and
  :func:`fs_restore` turns a path the model sent back into the exact bytes (through ``os.fsdecode``), so
  the file is found and opened.
"""

from __future__ import annotations

import os
import re
import sys

REPLACEMENT = "\ufffd"
_ESCAPED = re.compile("[\udc80-\udcff]")  # bytes that surrogateescape could not decode
_BYTE_ESCAPE = re.compile(r"\\x([0-9A-Fa-f]{2})")


def is_clean(text: str) -> bool:
    """True when ``text`` encodes as UTF-8 (no lone surrogates)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def clean_text(text: str) -> str:
    """``text`` with surrogate pairs joined and lone surrogates replaced by U+FFFD."""
    if is_clean(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def fs_display(name: str) -> str:
    r"""A file name for people and the model: undecodable bytes as ``\xNN`` (reversible by :func:`fs_restore`)."""
    if is_clean(name):
        return name
    shown = _ESCAPED.sub(lambda m: f"\\x{ord(m.group()) - 0xDC00:02X}", name)
    return clean_text(shown)  # any other lone surrogate (not from surrogateescape) cannot be a real name


def has_byte_escapes(text: str) -> bool:
    return _BYTE_ESCAPE.search(text) is not None


def fs_restore(text: str) -> str | None:
    r"""The real (surrogateescape) path for a name shown by :func:`fs_display`, or None if it has no escapes.

    ``\xNN`` runs are turned back into bytes and the whole path is decoded the way the OS module does
    (``os.fsdecode``), so ``报告.txt`` written in GBK on a UTF-8 system is found again.
    """
    if not has_byte_escapes(text) or os.name == "nt":  # Windows names are UTF-16: never undecodable bytes
        return None
    encoding = sys.getfilesystemencoding()
    out = bytearray()
    pos = 0
    for m in _BYTE_ESCAPE.finditer(text):
        out += text[pos : m.start()].encode(encoding, "surrogateescape")
        out.append(int(m.group(1), 16))
        pos = m.end()
    out += text[pos:].encode(encoding, "surrogateescape")
    return os.fsdecode(bytes(out))


def fs_hint(name: str) -> str | None:
    """What an undecodable name probably says (GBK/GB18030 is the usual source), or None."""
    if is_clean(name) or os.name == "nt":
        return None
    raw = name.encode(sys.getfilesystemencoding(), "surrogateescape")
    for encoding in ("gb18030", "big5", "shift_jis"):
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    return None
