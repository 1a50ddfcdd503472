"""Pairing codes (a 32-byte secret shown only in the QR code's URL fragment) and per-source rate limits.

Only the newest code is valid: showing a new QR code invalidates the one before. A code works once, for
:data:`PAIRING_TTL_S`. The desktop keeps the secret in memory only while the code is valid.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from weclaw_desktop.companion.crypto import b64e, pairing_id, pairing_key, random_bytes

PAIRING_TTL_S = 300.0
Clock = Callable[[], float]


@dataclass(frozen=True)
class PairingCode:
    secret: bytes
    pid: str
    url: str
    expires_at: float

    @property
    def key(self) -> bytes:
        return pairing_key(self.secret)

    def seconds_left(self, now: float | None = None) -> float:
        return max(0.0, self.expires_at - (now if now is not None else time.time()))


class PairingCodes:
    def __init__(self, ttl_s: float = PAIRING_TTL_S, clock: Clock = time.time) -> None:
        self.ttl_s = ttl_s
        self.clock = clock
        self._current: PairingCode | None = None

    def new(self, base_url: str) -> PairingCode:
        """A fresh code; the previous one stops working."""
        secret = random_bytes(32)
        code = PairingCode(secret, pairing_id(secret), f"{base_url}/#s={b64e(secret)}", self.clock() + self.ttl_s)
        self._current = code
        return code

    def find(self, pid: str) -> PairingCode | None:
        code = self._current
        if code is None or code.pid != pid or self.clock() >= code.expires_at:
            return None
        return code

    def consume(self, code: PairingCode) -> bool:
        if self._current is not code or self.clock() >= code.expires_at:
            return False
        self._current = None
        return True

    def clear(self) -> None:
        self._current = None


class RateLimiter:
    """At most ``limit`` events per ``window_s`` per key (sliding window), on an injectable clock."""

    def __init__(self, limit: int, window_s: float, clock: Clock = time.monotonic, max_keys: int = 10_000) -> None:
        self.limit = limit
        self.window_s = window_s
        self.clock = clock
        self.max_keys = max_keys
        self._hits: dict[str, deque[float]] = {}

    def _trim(self, key: str, now: float) -> deque[float]:
        hits = self._hits.setdefault(key, deque())
        while hits and hits[0] <= now - self.window_s:
            hits.popleft()
        return hits

    def blocked(self, key: str) -> float:
        """Seconds until ``key`` may try again (0: it may now). Does not count an attempt."""
        now = self.clock()
        hits = self._trim(key, now)
        if len(hits) >= self.limit:
            return hits[0] + self.window_s - now
        return 0.0

    def recent(self, key: str) -> bool:
        """``key`` has events within the window."""
        hits = self._hits.get(key)
        return bool(hits) and bool(self._trim(key, self.clock()))

    def hit(self, key: str) -> None:
        now = self.clock()
        self._trim(key, now).append(now)
        if len(self._hits) > self.max_keys:  # a flood of distinct keys: forget the quiet ones
            for k in [k for k, v in self._hits.items() if not v or v[-1] <= now - self.window_s]:
                del self._hits[k]

    def allow(self, key: str) -> tuple[bool, float]:
        """Count an attempt if allowed: (allowed, seconds until the next would be)."""
        wait = self.blocked(key)
        if wait > 0:
            return False, wait
        self.hit(key)
        return True, 0.0
