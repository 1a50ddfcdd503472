"""Authenticated sessions between a paired phone and this desktop (in memory: a restart ends them all and
the page opens a new one by itself).

Opening one takes two requests. ``hello`` returns a challenge the desktop can check without keeping state
(a timestamp and random bytes under a per-process key, valid :data:`CHALLENGE_TTL_S`, usable once). The
phone answers with ``HMAC(device key, challenge, its own nonce)``; both sides then derive the session's keys
from the device key, the challenge and the nonce. The device key itself never crosses the network after
pairing, and a captured request cannot be replayed: its lane's sequence number has been used, and a
captured ``session`` request names a challenge that has been redeemed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from weclaw_desktop.companion.crypto import CryptoError, b64d, b64e, hkdf, mac, random_bytes

CHALLENGE_TTL_S = 60.0
SESSION_IDLE_S = 30 * 60.0
SESSION_MAX_S = 24 * 3600.0
MAX_SESSIONS_PER_DEVICE = 8
MAX_LANES = 4096
Clock = Callable[[], float]


class Challenges:
    def __init__(self, clock: Clock = time.time) -> None:
        self.clock = clock
        self._key = random_bytes(32)  # per process: a restart invalidates every outstanding challenge
        self._used: dict[bytes, float] = {}

    def mint(self) -> str:
        body = int(self.clock() * 1000).to_bytes(8, "big") + random_bytes(8)
        return b64e(body + mac(self._key, "challenge", b64e(body))[:16])

    def redeem(self, challenge: str) -> bytes | None:
        """The challenge's bytes if it is ours, fresh and unused (it is then used up)."""
        try:
            raw = b64d(challenge, 32)
        except CryptoError:
            return None
        body, tag = raw[:16], raw[16:]
        if mac(self._key, "challenge", b64e(body))[:16] != tag:
            return None
        now = self.clock()
        age = now - int.from_bytes(body[:8], "big") / 1000
        if not -5 <= age <= CHALLENGE_TTL_S or raw in self._used:
            return None
        for k in [k for k, t in self._used.items() if t < now - CHALLENGE_TTL_S - 5]:
            del self._used[k]
        self._used[raw] = now
        return raw


def session_keys(device_key: bytes, sid: str, challenge: bytes, nonce: bytes) -> tuple[bytes, bytes, bytes]:
    """(mac key, phone->desktop key, desktop->phone key) of a session."""
    base = hkdf(device_key, f"session|{sid}", salt=challenge + nonce)
    return hkdf(base, "session-mac"), hkdf(base, "c2s"), hkdf(base, "s2c")


@dataclass
class Session:
    id: str
    device_id: str
    gen: int
    mac_key: bytes
    c2s: bytes
    s2c: bytes
    created_at: float
    last_used: float
    lanes: dict[str, int] = field(default_factory=dict)

    def take(self, lane: str, seq: int) -> str:
        """Use sequence number ``seq`` on ``lane``: 'ok' if above the last one used there, else 'replay';
        'full' when the session has no room for another lane (the page then opens a new session)."""
        last = self.lanes.get(lane)
        if last is not None and seq <= last:
            return "replay"
        if last is None and len(self.lanes) >= MAX_LANES:
            return "full"
        self.lanes[lane] = seq
        return "ok"


class Sessions:
    def __init__(self, clock: Clock = time.time) -> None:
        self.clock = clock
        self._by_id: dict[str, Session] = {}

    def open(self, device_id: str, gen: int, device_key: bytes, challenge: bytes, nonce: bytes) -> Session:
        now = self.clock()
        self._purge(now)
        mine = sorted((s for s in self._by_id.values() if s.device_id == device_id), key=lambda s: s.last_used)
        for old in mine[: max(0, len(mine) - MAX_SESSIONS_PER_DEVICE + 1)]:
            del self._by_id[old.id]
        sid = b64e(random_bytes(16))
        mk, c2s, s2c = session_keys(device_key, sid, challenge, nonce)
        session = Session(sid, device_id, gen, mk, c2s, s2c, now, now)
        self._by_id[sid] = session
        return session

    def get(self, sid: str) -> Session | None:
        session = self._by_id.get(sid)
        if session is None:
            return None
        now = self.clock()
        if now - session.last_used > SESSION_IDLE_S or now - session.created_at > SESSION_MAX_S:
            del self._by_id[sid]
            return None
        session.last_used = now
        return session

    def end_device(self, device_id: str) -> None:
        for sid in [k for k, s in self._by_id.items() if s.device_id == device_id]:
            del self._by_id[sid]

    def clear(self) -> None:
        self._by_id.clear()

    def _purge(self, now: float) -> None:
        for sid in [
            k
            for k, s in self._by_id.items()
            if now - s.last_used > SESSION_IDLE_S or now - s.created_at > SESSION_MAX_S
        ]:
            del self._by_id[sid]
