"""The desktop's one phone-link secret: a 32-byte master key in the OS keyring (never in a file or the database).

Every other key is derived from it with a random salt the database keeps (a salt alone is worthless):
a device's key per key generation, and the key of every offered or uploaded file. Without a usable keyring
the master key lives for this run only (:attr:`MasterKey.persistent` is False): phones then pair again after
a restart, and offers from an earlier run cannot be resumed; the service says so instead of failing later.
Blocking (keyring): call :meth:`MasterKey.load` through ``asyncio.to_thread``.
"""

from __future__ import annotations

import logging
from typing import Protocol

from weclaw_desktop.companion.crypto import KEY, CryptoError, b64d, b64e, hkdf, mac, random_bytes

log = logging.getLogger("weclaw.companion")

SECRET_NAME = "companion.master_key"


class Secrets(Protocol):
    persistent: bool

    def get(self, name: str) -> str | None: ...

    def set(self, name: str, value: str) -> bool: ...


class MasterKey:
    def __init__(self, secrets: Secrets) -> None:
        self._secrets = secrets
        self._key = b""
        self.created = False  # made during this run (earlier pairings and offers cannot be opened)

    @property
    def persistent(self) -> bool:
        return bool(self._secrets.persistent)

    def load(self) -> None:
        if self._key:
            return
        stored = self._secrets.get(SECRET_NAME)
        if stored:
            try:
                self._key = b64d(stored, KEY)
                return
            except CryptoError:
                log.warning("the phone link's key in the keyring is damaged; making a new one")
        self._key = random_bytes(KEY)
        self.created = True
        if not self._secrets.set(SECRET_NAME, b64e(self._key)):
            log.warning("no usable keyring: paired phones must pair again after the app restarts")

    @property
    def key(self) -> bytes:
        if not self._key:
            raise RuntimeError("MasterKey.load() first")
        return self._key

    def check_value(self) -> str:
        """A public fingerprint kept in the database: tells whether stored salts belong to this key."""
        return b64e(mac(self.key, "weclaw/v1/check")[:12])

    def device_key(self, device_id: str, gen: int, salt: bytes) -> bytes:
        return hkdf(self.key, f"device|{device_id}|{gen}", salt=salt)

    def file_key(self, direction: str, owner: str, file_id: str, salt: bytes) -> bytes:
        return hkdf(self.key, f"file|{direction}|{owner}|{file_id}", salt=salt)
