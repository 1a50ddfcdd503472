"""Text encoding detection for files users have: UTF-8, GBK/GB18030, UTF-16/32 with a BOM, and the rest.

Order: a BOM decides; then strict UTF-8; then GB18030 when the bytes look like GB2312-range Chinese (short
Chinese texts are where general detectors guess wrong, e.g. cp949 or big5); then charset-normalizer for
everything else. Binary content (NUL bytes without a UTF-16/32 signature, many control characters) is
reported as binary with a type guess from its magic bytes.
"""

from __future__ import annotations

import codecs
import mimetypes
from dataclasses import dataclass
from pathlib import Path

SAMPLE_BYTES = 64 * 1024

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF8", "GIF image"),
    (b"%PDF", "PDF document"),
    (b"PK\x03\x04", "zip archive (or an Office document: docx/xlsx/pptx)"),
    (b"\x1f\x8b", "gzip archive"),
    (b"7z\xbc\xaf\x27\x1c", "7z archive"),
    (b"Rar!", "RAR archive"),
    (b"\x7fELF", "Linux executable"),
    (b"MZ", "Windows executable"),
    (b"\xd0\xcf\x11\xe0", "old Office document (doc/xls/ppt)"),
    (b"SQLite format 3\x00", "SQLite database"),
    (b"ID3", "MP3 audio"),
    (b"OggS", "Ogg audio"),
    (b"RIFF", "RIFF media (WAV/AVI/WebP)"),
)

_CJK_FAMILY = {
    "gb2312",
    "gbk",
    "gb18030",
    "hz",
    "big5",
    "big5hkscs",
    "cp950",
    "cp949",
    "euc_kr",
    "johab",
    "euc_jp",
    "shift_jis",
    "cp932",
    "iso2022_jp",
    "iso2022_kr",
}


@dataclass(frozen=True)
class Sniffed:
    """What the first bytes of a file say: its text encoding, or that it is binary (and what kind)."""

    encoding: str | None
    binary_kind: str | None = None

    @property
    def is_binary(self) -> bool:
        return self.encoding is None


def _bom(sample: bytes) -> str | None:
    for bom, name in _BOMS:
        if sample.startswith(bom):
            return name
    return None


def _valid_utf8_prefix(sample: bytes) -> bool:
    """Strict UTF-8, allowing a multi-byte character cut at the end of the sample."""
    try:
        codecs.getincrementaldecoder("utf-8")("strict").decode(sample, final=False)
    except UnicodeDecodeError:
        return False
    return True


def _gb2312_share(sample: bytes) -> float:
    """Share of non-ASCII bytes that form GB2312-range pairs (lead 0xA1-0xF7, trail 0xA1-0xFE)."""
    high = paired = 0
    i, n = 0, len(sample)
    while i < n:
        b = sample[i]
        if b < 0x80:
            i += 1
            continue
        if 0xA1 <= b <= 0xF7 and i + 1 < n and 0xA1 <= sample[i + 1] <= 0xFE:
            high += 2
            paired += 2
            i += 2
            continue
        high += 1
        i += 1
    return paired / high if high else 0.0


def _decodes(sample: bytes, encoding: str) -> bool:
    try:
        codecs.getincrementaldecoder(encoding)("strict").decode(sample, final=False)
    except (UnicodeDecodeError, LookupError):
        return False
    return True


def binary_kind(sample: bytes, path: Path | None = None) -> str:
    for magic, kind in _MAGIC:
        if sample.startswith(magic):
            return kind
    if path is not None:
        guessed, _ = mimetypes.guess_type(path.name)
        if guessed:
            return guessed
    return "binary data"


_CONTROL_BYTES = bytes([*range(0x09), *range(0x0E, 0x20), 0x7F])
_NOT_CONTROL = bytes(b for b in range(256) if b not in _CONTROL_BYTES)


def _looks_binary(sample: bytes) -> bool:
    if b"\x00" in sample:
        return True
    head = sample[:8192]
    controls = len(head.translate(None, _NOT_CONTROL))
    return controls > max(8, len(head) // 20)


def sniff(sample: bytes, path: Path | None = None) -> Sniffed:
    """Decide the encoding of ``sample`` (the first bytes of a file)."""
    bom = _bom(sample)
    if bom:
        return Sniffed(bom)
    if not sample:
        return Sniffed("utf-8")
    binary = _looks_binary(sample)
    if not binary and _valid_utf8_prefix(sample):
        return Sniffed("utf-8")
    if binary:
        if b"\x00" in sample:
            guessed = _normalizer_guess(sample)
            if guessed in ("utf_16", "utf_16_le", "utf_16_be", "utf_32", "utf_32_le", "utf_32_be"):
                return Sniffed(guessed)
        return Sniffed(None, binary_kind(sample, path))
    gb_like = _gb2312_share(sample) >= 0.85 and _decodes(sample, "gb18030")
    guessed = _normalizer_guess(sample)
    if gb_like and (guessed is None or guessed in _CJK_FAMILY):
        return Sniffed("gb18030")
    if guessed is not None:
        return Sniffed("gb18030" if guessed in ("gb2312", "gbk") else guessed)
    if _decodes(sample, "gb18030"):
        return Sniffed("gb18030")
    return Sniffed(None, binary_kind(sample, path))


def _normalizer_guess(sample: bytes) -> str | None:
    from charset_normalizer import from_bytes

    best = from_bytes(sample).best()
    return best.encoding if best is not None else None


def sniff_file(path: Path, sample_bytes: int = SAMPLE_BYTES) -> Sniffed:
    with open(path, "rb") as fh:
        return sniff(fh.read(sample_bytes), path)


def decode_bytes(data: bytes, encoding: str | None = None) -> tuple[str, str]:
    """Decode ``data`` (a whole small file) with the given or detected encoding: (text, encoding used)."""
    enc = encoding or sniff(data[:SAMPLE_BYTES]).encoding or "utf-8"
    return data.decode(enc, errors="replace"), enc
