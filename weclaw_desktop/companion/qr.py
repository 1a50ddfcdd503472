"""QR codes for pairing (segno: pure Python, no image library needed)."""

from __future__ import annotations

import io

import segno


def qr_png(text: str, *, scale: int = 6, border: int = 3) -> bytes:
    buf = io.BytesIO()
    segno.make(text, error="m").save(buf, kind="png", scale=scale, border=border, dark="#111111", light="#ffffff")
    return buf.getvalue()


def qr_text(text: str) -> str:
    """The QR code drawn with block characters, for the terminal."""
    buf = io.StringIO()
    segno.make(text, error="m").terminal(out=buf, compact=True)
    return buf.getvalue()
