"""Paired phones, stored in weclaw.db (component ``companion``). Device tokens are kept only as SHA-256.

All methods are blocking SQLite work: call them through ``asyncio.to_thread`` from the event loop.
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
import time
import uuid
from dataclasses import dataclass
from enum import StrEnum

from weclaw_desktop.storage.db import Database, Migration, register_migrations

#: A device that has not been seen for this long must pair again (sliding: every use extends it).
DEVICE_TTL_S = 180 * 24 * 3600

register_migrations(
    "companion",
    [
        Migration(
            1,
            """
            CREATE TABLE companion_devices (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                token_sha256 TEXT NOT NULL UNIQUE,
                user_agent TEXT NOT NULL DEFAULT '',
                created_at REAL NOT NULL,
                last_seen REAL NOT NULL,
                expires_at REAL NOT NULL,
                revoked_at REAL
            )
            """,
        ),
    ],
)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class AuthProblem(StrEnum):
    MISSING = "missing"
    UNKNOWN = "unknown"
    REVOKED = "revoked"
    EXPIRED = "expired"


@dataclass(frozen=True)
class Device:
    id: str
    name: str
    user_agent: str
    created_at: float
    last_seen: float
    expires_at: float
    revoked_at: float | None

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None

    def problem(self, now: float | None = None) -> AuthProblem | None:
        if self.revoked:
            return AuthProblem.REVOKED
        if (now or time.time()) >= self.expires_at:
            return AuthProblem.EXPIRED
        return None


_COLUMNS = "id, name, user_agent, created_at, last_seen, expires_at, revoked_at"


def _device(r: sqlite3.Row) -> Device:
    return Device(
        r["id"], r["name"], r["user_agent"], r["created_at"], r["last_seen"], r["expires_at"], r["revoked_at"]
    )


class DeviceStore:
    def __init__(self, db: Database) -> None:
        self.db = db
        db.ensure("companion")

    def add(self, name: str, user_agent: str = "") -> tuple[Device, str]:
        """A new device and its token (returned once, never stored in clear)."""
        token = secrets.token_urlsafe(32)
        now = time.time()
        device = Device(uuid.uuid4().hex[:12], name, user_agent[:300], now, now, now + DEVICE_TTL_S, None)
        self.db.execute(
            f"INSERT INTO companion_devices ({_COLUMNS}, token_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (device.id, device.name, device.user_agent, now, now, device.expires_at, None, token_hash(token)),
        )
        return device, token

    def by_token(self, token: str) -> Device | None:
        rows = self.db.query(f"SELECT {_COLUMNS} FROM companion_devices WHERE token_sha256=?", (token_hash(token),))
        return _device(rows[0]) if rows else None

    def get(self, device_id: str) -> Device | None:
        rows = self.db.query(f"SELECT {_COLUMNS} FROM companion_devices WHERE id=?", (device_id,))
        return _device(rows[0]) if rows else None

    def list(self, *, include_revoked: bool = False) -> list[Device]:
        where = "" if include_revoked else "WHERE revoked_at IS NULL"
        rows = self.db.query(f"SELECT {_COLUMNS} FROM companion_devices {where} ORDER BY last_seen DESC")
        return [_device(r) for r in rows]

    def touch(self, device_id: str, when: float | None = None) -> None:
        now = when or time.time()
        self.db.execute(
            "UPDATE companion_devices SET last_seen=?, expires_at=? WHERE id=? AND revoked_at IS NULL",
            (now, now + DEVICE_TTL_S, device_id),
        )

    def revoke(self, device_id: str) -> bool:
        with self.db.transaction() as conn:
            cur = conn.execute(
                "UPDATE companion_devices SET revoked_at=? WHERE id=? AND revoked_at IS NULL", (time.time(), device_id)
            )
            return cur.rowcount > 0

    def rename(self, device_id: str, name: str) -> None:
        self.db.execute("UPDATE companion_devices SET name=? WHERE id=?", (name, device_id))

    def forget(self, device_id: str) -> None:
        self.db.execute("DELETE FROM companion_devices WHERE id=?", (device_id,))

    def set_expiry(self, device_id: str, expires_at: float) -> None:
        """Used by maintenance and tests: expire a device at a given time."""
        self.db.execute("UPDATE companion_devices SET expires_at=? WHERE id=?", (expires_at, device_id))
