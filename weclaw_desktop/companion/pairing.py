"""One-time pairing codes (single use, 5 minutes) and the rate limiter for pairing attempts."""

from __future__ import annotations

import hashlib
import secrets
import time
from collections import deque
from dataclasses import dataclass

PAIRING_TTL_S = 300.0


@dataclass(frozen=True)
class PairingCode:
    token: str
    url: str
    expires_at: float

    def seconds_left(self, now: float | None = None) -> float:
        return max(0.0, self.expires_at - (now if now is not None else time.time()))


def _h(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class PairingCodes:
    """Outstanding codes, kept only as hashes. ``consume`` succeeds once per code, before it expires."""

    def __init__(self, ttl_s: float = PAIRING_TTL_S) -> None:
        self.ttl_s = ttl_s
        self._codes: dict[str, float] = {}  # sha256(token) -> expires_at

    def new(self, base_url: str) -> PairingCode:
        self._purge()
        token = secrets.token_urlsafe(18)
        expires = time.time() + self.ttl_s
        self._codes[_h(token)] = expires
        return PairingCode(token=token, url=f"{base_url}/#t={token}", expires_at=expires)

    def consume(self, token: str) -> bool:
        expires = self._codes.pop(_h(token), None)
        return expires is not None and time.time() < expires

    def clear(self) -> None:
        self._codes.clear()

    def _purge(self) -> None:
        now = time.time()
        for key in [k for k, exp in self._codes.items() if exp <= now]:
            del self._codes[key]


class RateLimiter:
    """At most ``limit`` events per ``window_s`` per key (sliding window)."""

    def __init__(self, limit: int, window_s: float) -> None:
        self.limit = limit
        self.window_s = window_s
        self._hits: dict[str, deque[float]] = {}

    def allow(self, key: str) -> tuple[bool, float]:
        """(allowed, seconds until the next attempt would be allowed)."""
        now = time.monotonic()
        hits = self._hits.setdefault(key, deque())
        while hits and hits[0] <= now - self.window_s:
            hits.popleft()
        if len(hits) >= self.limit:
            return False, hits[0] + self.window_s - now
        hits.append(now)
        if len(self._hits) > 10_000:  # a flood of distinct keys: forget the idle ones
            for k in [k for k, v in self._hits.items() if not v]:
                del self._hits[k]
        return True, 0.0
