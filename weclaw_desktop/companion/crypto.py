"""The phone link's cryptography, on ``cryptography`` (OpenSSL): HKDF-SHA256, HMAC-SHA256, ChaCha20-Poly1305.

The phone page does the same with the vendored ``@noble/ciphers`` and ``@noble/hashes`` (resources/companion/
proto.js); ``tests/companion/test_crypto.py`` runs both on the same inputs. Nothing here does I/O.

Records: a file is cut into records of :data:`RECORD` bytes (the last one shorter; an empty file is one
empty record). Every response or request that carries records starts with a fresh 16-byte salt; the records
that follow are sealed under ``HKDF(file key, salt)`` with the record index as the nonce and
``file id | index | record count | size`` as associated data. A fresh key per response means a record sent
twice (a resumed download) never reuses a (key, nonce) pair; the index in the nonce and the associated data
mean a record that is changed, moved, swapped with another file's or cut short fails to open.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from collections.abc import Iterator

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

VERSION = "weclaw/v1"
RECORD = 1 << 20  # plaintext bytes per record
TAG = 16  # Poly1305 tag
SALT = 16  # per-response record salt
NONCE = 12
KEY = 32


class CryptoError(ValueError):
    """Something did not authenticate (wrong key, tampered, truncated or replayed)."""


def b64e(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64d(text: str, length: int | None = None) -> bytes:
    """Strict URL-safe base64 without padding; ``length`` checks the decoded size."""
    if not isinstance(text, str) or len(text) > 1 << 20:
        raise CryptoError("not base64")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, TypeError) as exc:
        raise CryptoError("not base64") from exc
    if b64e(raw) != text:
        raise CryptoError("not canonical base64")
    if length is not None and len(raw) != length:
        raise CryptoError(f"expected {length} bytes")
    return raw


def random_bytes(n: int) -> bytes:
    return os.urandom(n)


def hkdf(ikm: bytes, info: str, *, salt: bytes = b"", length: int = KEY) -> bytes:
    return HKDF(hashes.SHA256(), length, salt or None, f"{VERSION}/{info}".encode()).derive(ikm)


def mac(key: bytes, *parts: str) -> bytes:
    """HMAC-SHA256 over the parts joined with newlines (every part is free of newlines by construction)."""
    return hmac.new(key, "\n".join(parts).encode("utf-8"), hashlib.sha256).digest()


def mac_ok(key: bytes, tag: bytes, *parts: str) -> bool:
    return hmac.compare_digest(mac(key, *parts), tag)


def digest(data: bytes) -> str:
    """The body digest a request MAC covers: base64 of SHA-256 (the empty body included)."""
    return b64e(hashlib.sha256(data).digest())


# --- the pairing secret (the QR code's URL fragment) ---------------------------------------------------


def pairing_id(secret: bytes) -> str:
    """A public name for a pairing secret (sent in clear so the desktop finds the code)."""
    return b64e(hkdf(secret, "pair-id", length=9))


def pairing_key(secret: bytes) -> bytes:
    return hkdf(secret, "pair-key")


# --- sealed JSON envelopes -------------------------------------------------------------------------------


def seal(key: bytes, plaintext: bytes, ad: str) -> dict[str, str]:
    nonce = os.urandom(NONCE)
    return {"n": b64e(nonce), "c": b64e(ChaCha20Poly1305(key).encrypt(nonce, plaintext, ad.encode()))}


def open_sealed(key: bytes, envelope: object, ad: str) -> bytes:
    if (
        not isinstance(envelope, dict)
        or not isinstance(envelope.get("n"), str)
        or not isinstance(envelope.get("c"), str)
    ):
        raise CryptoError("not a sealed envelope")
    nonce = b64d(envelope["n"], NONCE)
    try:
        return ChaCha20Poly1305(key).decrypt(nonce, b64d(envelope["c"]), ad.encode())
    except InvalidTag as exc:
        raise CryptoError("the envelope does not open with this key") from exc


# --- file records --------------------------------------------------------------------------------------


def record_count(size: int) -> int:
    return max(1, -(-size // RECORD))


def record_len(size: int, index: int) -> int:
    """Plaintext length of record ``index`` of a file of ``size`` bytes."""
    return min(RECORD, size - index * RECORD) if size else 0


def record_nonce(index: int) -> bytes:
    return index.to_bytes(NONCE, "big")


def record_ad(file_id: str, index: int, size: int) -> bytes:
    return f"{VERSION}/rec|{file_id}|{index}|{record_count(size)}|{size}".encode()


class RecordSealer:
    """Seals (or opens) the records of one file within one response: a fresh salt, a key derived from it."""

    def __init__(self, file_key: bytes, file_id: str, size: int, salt: bytes | None = None) -> None:
        self.salt = salt if salt is not None else os.urandom(SALT)
        if len(self.salt) != SALT:
            raise CryptoError("bad record salt")
        self._aead = ChaCha20Poly1305(hkdf(file_key, "records", salt=self.salt))
        self.file_id = file_id
        self.size = size
        self.count = record_count(size)

    def seal(self, index: int, plaintext: bytes) -> bytes:
        if not 0 <= index < self.count or len(plaintext) != record_len(self.size, index):
            raise CryptoError("record out of range")
        return self._aead.encrypt(record_nonce(index), plaintext, record_ad(self.file_id, index, self.size))

    def seal_into(self, index: int, plaintext: memoryview, out: memoryview) -> None:
        """Seal record ``index`` into ``out`` (its plaintext length + TAG bytes), without copies."""
        if not 0 <= index < self.count or len(plaintext) != record_len(self.size, index):
            raise CryptoError("record out of range")
        self._aead.encrypt_into(record_nonce(index), plaintext, record_ad(self.file_id, index, self.size), out)

    def open(self, index: int, sealed: bytes) -> bytes:
        if not 0 <= index < self.count or len(sealed) != record_len(self.size, index) + TAG:
            raise CryptoError("record out of range or cut short")
        try:
            return self._aead.decrypt(record_nonce(index), sealed, record_ad(self.file_id, index, self.size))
        except InvalidTag as exc:
            raise CryptoError(f"record {index} does not authenticate") from exc


def split_records(data: bytes, size: int, first: int) -> Iterator[tuple[int, bytes]]:
    """(index, sealed record) pairs of a body holding whole records from ``first`` on (after the salt)."""
    offset, index = 0, first
    while offset < len(data):
        n = record_len(size, index) + TAG
        if offset + n > len(data):
            raise CryptoError("the body ends inside a record")
        yield index, data[offset : offset + n]
        offset += n
        index += 1


# --- event streams ---------------------------------------------------------------------------------------


class FrameSealer:
    """Frames of one event stream: ``4-byte length || sealed JSON``, nonce = frame index."""

    def __init__(self, key: bytes, label: str, salt: bytes | None = None) -> None:
        self.salt = salt if salt is not None else os.urandom(SALT)
        self._aead = ChaCha20Poly1305(hkdf(key, "events", salt=self.salt))
        self.label = label
        self.index = 0

    def seal(self, plaintext: bytes) -> bytes:
        ad = f"{VERSION}/ev|{self.label}|{self.index}".encode()
        sealed = self._aead.encrypt(record_nonce(self.index), plaintext, ad)
        self.index += 1
        return len(sealed).to_bytes(4, "big") + sealed

    def open(self, sealed: bytes) -> bytes:
        ad = f"{VERSION}/ev|{self.label}|{self.index}".encode()
        try:
            out = self._aead.decrypt(record_nonce(self.index), sealed, ad)
        except InvalidTag as exc:
            raise CryptoError("event frame does not authenticate") from exc
        self.index += 1
        return out
