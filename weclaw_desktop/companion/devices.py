"""Paired phones, stored in weclaw.db (component ``companion``). No key is stored: a device's key is derived
from the keyring's master key and the salt of its current key generation (:mod:`.keys`).

A device key has an absolute lifetime (:data:`KEY_LIFETIME_S` from when it was issued); while the phone
uses the link, a key older than :data:`KEY_RENEW_AFTER_S` is replaced by a new generation (the previous one
keeps working until its own lifetime ends, in case the phone missed the new one). Pairing again from the
same phone (its random phone id, kept only as a hash) replaces the entry and its key. All methods are
blocking SQLite work: call them through ``asyncio.to_thread`` from the event loop.
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
import uuid
from dataclasses import dataclass

from weclaw_desktop.storage.db import Database, Migration, register_migrations

KEY_LIFETIME_S = 30 * 24 * 3600.0
KEY_RENEW_AFTER_S = 7 * 24 * 3600.0

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
        # Phone link v2: bearer tokens are gone (phones paired with v1 pair again); devices hold key
        # generations, and offers and uploads persist so they survive a restart.
        Migration(
            2,
            """
            DROP TABLE companion_devices;
            CREATE TABLE companion_devices (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                phone_hash TEXT NOT NULL,
                user_agent TEXT NOT NULL DEFAULT '',
                created_at REAL NOT NULL,
                last_seen REAL NOT NULL,
                key_gen INTEGER NOT NULL,
                key_salt BLOB NOT NULL,
                key_issued_at REAL NOT NULL,
                prev_gen INTEGER,
                prev_salt BLOB,
                prev_issued_at REAL,
                revoked_at REAL,
                revoke_reason TEXT NOT NULL DEFAULT ''
            );
            CREATE INDEX companion_devices_phone ON companion_devices(phone_hash);
            CREATE TABLE companion_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE companion_offers (
                id TEXT PRIMARY KEY,
                device_id TEXT NOT NULL,
                created_at REAL NOT NULL,
                cancelled INTEGER NOT NULL DEFAULT 0
            );
            CREATE TABLE companion_offer_files (
                offer_id TEXT NOT NULL REFERENCES companion_offers(id) ON DELETE CASCADE,
                id TEXT NOT NULL,
                seq INTEGER NOT NULL,
                path TEXT NOT NULL,
                name TEXT NOT NULL,
                size INTEGER NOT NULL,
                mime TEXT NOT NULL,
                mtime_ns INTEGER NOT NULL,
                sha256 TEXT NOT NULL,
                key_salt BLOB NOT NULL,
                state TEXT NOT NULL,
                error TEXT NOT NULL DEFAULT '',
                served INTEGER NOT NULL DEFAULT 0,
                updated_at REAL NOT NULL,
                PRIMARY KEY (offer_id, id)
            );
            CREATE TABLE companion_uploads (
                id TEXT PRIMARY KEY,
                device_id TEXT NOT NULL,
                created_at REAL NOT NULL,
                last_activity REAL NOT NULL,
                cancelled INTEGER NOT NULL DEFAULT 0
            );
            CREATE TABLE companion_upload_files (
                upload_id TEXT NOT NULL REFERENCES companion_uploads(id) ON DELETE CASCADE,
                id TEXT NOT NULL,
                seq INTEGER NOT NULL,
                name TEXT NOT NULL,
                size INTEGER NOT NULL,
                mime TEXT NOT NULL,
                key_salt BLOB NOT NULL,
                received INTEGER NOT NULL DEFAULT 0,
                part TEXT NOT NULL DEFAULT '',
                state TEXT NOT NULL,
                saved_as TEXT NOT NULL DEFAULT '',
                sha256 TEXT NOT NULL DEFAULT '',
                error TEXT NOT NULL DEFAULT '',
                updated_at REAL NOT NULL,
                PRIMARY KEY (upload_id, id)
            );
            """,
        ),
    ],
)


def phone_hash(phone_id: str) -> str:
    return hashlib.sha256(f"weclaw/v1/phone|{phone_id}".encode()).hexdigest()


@dataclass(frozen=True)
class Device:
    id: str
    name: str
    user_agent: str
    created_at: float
    last_seen: float
    key_gen: int
    key_salt: bytes
    key_issued_at: float
    prev_gen: int | None
    prev_salt: bytes | None
    prev_issued_at: float | None
    revoked_at: float | None
    revoke_reason: str

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None

    @property
    def expires_at(self) -> float:
        return self.key_issued_at + KEY_LIFETIME_S

    def problem(self, now: float) -> str | None:
        """'revoked', 'expired' or None."""
        if self.revoked:
            return "revoked"
        if now >= self.expires_at:
            return "expired"
        return None

    def salt_for(self, gen: int, now: float) -> bytes | None:
        """The salt of key generation ``gen`` if that generation is still valid."""
        if gen == self.key_gen and now < self.key_issued_at + KEY_LIFETIME_S:
            return self.key_salt
        if (
            gen == self.prev_gen
            and self.prev_salt is not None
            and self.prev_issued_at is not None
            and now < self.prev_issued_at + KEY_LIFETIME_S
        ):
            return self.prev_salt
        return None

    def any_salt(self, gen: int) -> bytes | None:
        """The salt of ``gen`` even if expired or revoked (to authenticate a 'revoked' answer to that phone)."""
        if gen == self.key_gen:
            return self.key_salt
        return self.prev_salt if gen == self.prev_gen else None


_COLUMNS = (
    "id, name, user_agent, created_at, last_seen, key_gen, key_salt, key_issued_at, prev_gen, prev_salt, "
    "prev_issued_at, revoked_at, revoke_reason"
)


def _device(r: sqlite3.Row) -> Device:
    return Device(
        r["id"],
        r["name"],
        r["user_agent"],
        r["created_at"],
        r["last_seen"],
        r["key_gen"],
        bytes(r["key_salt"]),
        r["key_issued_at"],
        r["prev_gen"],
        bytes(r["prev_salt"]) if r["prev_salt"] is not None else None,
        r["prev_issued_at"],
        r["revoked_at"],
        r["revoke_reason"],
    )


class DeviceStore:
    def __init__(self, db: Database) -> None:
        self.db = db
        db.ensure("companion")

    def pair(self, phone: str, name: str, user_agent: str, now: float) -> tuple[Device, bool]:
        """A device for this phone: its old entry with a new key generation (True), or a new entry (False)."""
        h = phone_hash(phone)
        salt = secrets.token_bytes(16)
        with self.db.transaction() as conn:
            row = conn.execute(
                "SELECT id, key_gen FROM companion_devices WHERE phone_hash=? ORDER BY last_seen DESC LIMIT 1", (h,)
            ).fetchone()
            if row is not None:
                conn.execute(
                    "UPDATE companion_devices SET name=?, user_agent=?, last_seen=?, key_gen=?, key_salt=?, "
                    "key_issued_at=?, prev_gen=NULL, prev_salt=NULL, prev_issued_at=NULL, revoked_at=NULL, "
                    "revoke_reason='' WHERE id=?",
                    (name, user_agent[:300], now, row["key_gen"] + 1, salt, now, row["id"]),
                )
                device_id, replaced = row["id"], True
            else:
                device_id, replaced = uuid.uuid4().hex[:12], False
                conn.execute(
                    f"INSERT INTO companion_devices ({_COLUMNS}, phone_hash) "
                    "VALUES (?, ?, ?, ?, ?, 1, ?, ?, NULL, NULL, NULL, NULL, '', ?)",
                    (device_id, name, user_agent[:300], now, now, salt, now, h),
                )
        device = self.get(device_id)
        assert device is not None
        return device, replaced

    def get(self, device_id: str) -> Device | None:
        rows = self.db.query(f"SELECT {_COLUMNS} FROM companion_devices WHERE id=?", (device_id,))
        return _device(rows[0]) if rows else None

    def list(self, *, include_revoked: bool = False) -> list[Device]:
        where = "" if include_revoked else "WHERE revoked_at IS NULL"
        rows = self.db.query(f"SELECT {_COLUMNS} FROM companion_devices {where} ORDER BY last_seen DESC")
        return [_device(r) for r in rows]

    def touch(self, device_id: str, now: float) -> None:
        self.db.execute("UPDATE companion_devices SET last_seen=? WHERE id=? AND revoked_at IS NULL", (now, device_id))

    def renew(self, device_id: str, now: float) -> Device | None:
        """Issue the next key generation; the current one becomes the previous (valid to its own end)."""
        salt = secrets.token_bytes(16)
        self.db.execute(
            "UPDATE companion_devices SET prev_gen=key_gen, prev_salt=key_salt, prev_issued_at=key_issued_at, "
            "key_gen=key_gen+1, key_salt=?, key_issued_at=? WHERE id=? AND revoked_at IS NULL",
            (salt, now, device_id),
        )
        return self.get(device_id)

    def drop_previous(self, device_id: str) -> None:
        """The phone used the new generation: the previous key stops working."""
        self.db.execute(
            "UPDATE companion_devices SET prev_gen=NULL, prev_salt=NULL, prev_issued_at=NULL WHERE id=?", (device_id,)
        )

    def revoke(self, device_id: str, now: float, reason: str = "") -> bool:
        with self.db.transaction() as conn:
            cur = conn.execute(
                "UPDATE companion_devices SET revoked_at=?, revoke_reason=? WHERE id=? AND revoked_at IS NULL",
                (now, reason, device_id),
            )
            return cur.rowcount > 0

    def revoke_all(self, now: float, reason: str) -> int:
        with self.db.transaction() as conn:
            cur = conn.execute(
                "UPDATE companion_devices SET revoked_at=?, revoke_reason=? WHERE revoked_at IS NULL", (now, reason)
            )
            return cur.rowcount

    def rename(self, device_id: str, name: str) -> None:
        self.db.execute("UPDATE companion_devices SET name=? WHERE id=?", (name, device_id))

    def set_issued(self, device_id: str, issued_at: float) -> None:
        """Maintenance and tests: pretend the current key was issued at ``issued_at``."""
        self.db.execute("UPDATE companion_devices SET key_issued_at=? WHERE id=?", (issued_at, device_id))

    def meta(self, key: str) -> str | None:
        rows = self.db.query("SELECT value FROM companion_meta WHERE key=?", (key,))
        return str(rows[0]["value"]) if rows else None

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO companion_meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            (key, value),
        )
