"""Offers and uploads in weclaw.db, so a restart (or a kill -9) loses nothing: the phone resumes where it was.

Written on every state change and after each batch of records; read once when the service starts. Blocking
SQLite work: call through ``asyncio.to_thread``. Tables are created by the ``companion`` migrations in
:mod:`.devices`.
"""

from __future__ import annotations

from pathlib import Path

from weclaw_desktop.companion.transfers import (
    FileState,
    IncomingFile,
    IncomingSession,
    OutgoingFile,
    OutgoingTransfer,
)
from weclaw_desktop.storage.db import Database


class TransferStore:
    def __init__(self, db: Database) -> None:
        self.db = db
        db.ensure("companion")

    # --- offers (desktop -> phone) ----------------------------------------------------------------
    def add_offer(self, t: OutgoingTransfer, now: float) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO companion_offers (id, device_id, created_at, cancelled) VALUES (?, ?, ?, ?)",
                (t.id, t.device_id, t.created_at, int(t.cancelled)),
            )
            conn.executemany(
                "INSERT INTO companion_offer_files (offer_id, id, seq, path, name, size, mime, mtime_ns, sha256, "
                "key_salt, state, error, served, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        t.id,
                        f.id,
                        f.seq,
                        str(f.path),
                        f.name,
                        f.size,
                        f.mime,
                        f.mtime_ns,
                        f.sha256,
                        f.key_salt,
                        f.state.value,
                        f.error,
                        f.served,
                        now,
                    )
                    for f in t.files.values()
                ],
            )

    def update_offer_file(self, offer_id: str, f: OutgoingFile, now: float) -> None:
        self.db.execute(
            "UPDATE companion_offer_files SET state=?, error=?, served=?, updated_at=? WHERE offer_id=? AND id=?",
            (f.state.value, f.error, f.served, now, offer_id, f.id),
        )

    def cancel_upload(self, s: IncomingSession) -> None:
        self.db.execute("UPDATE companion_uploads SET cancelled=1 WHERE id=?", (s.id,))

    def cancel_offer(self, t: OutgoingTransfer, now: float) -> None:
        with self.db.transaction() as conn:
            conn.execute("UPDATE companion_offers SET cancelled=1 WHERE id=?", (t.id,))
            conn.executemany(
                "UPDATE companion_offer_files SET state=?, error=?, updated_at=? WHERE offer_id=? AND id=?",
                [(f.state.value, f.error, now, t.id, f.id) for f in t.files.values()],
            )

    def load_offers(self) -> list[OutgoingTransfer]:
        offers = {
            r["id"]: OutgoingTransfer(r["id"], r["device_id"], {}, r["created_at"], bool(r["cancelled"]))
            for r in self.db.query("SELECT * FROM companion_offers ORDER BY created_at")
        }
        for r in self.db.query("SELECT * FROM companion_offer_files ORDER BY offer_id, seq"):
            t = offers.get(r["offer_id"])
            if t is None:
                continue
            f = OutgoingFile(
                id=r["id"],
                seq=r["seq"],
                path=Path(r["path"]),
                name=r["name"],
                size=r["size"],
                sha256=r["sha256"],
                mime=r["mime"],
                mtime_ns=r["mtime_ns"],
                key_salt=bytes(r["key_salt"]),
                state=FileState(r["state"]),
                served=r["served"],
                error=r["error"],
            )
            if f.state.final:
                f.done.set()
            t.files[f.id] = f
        return list(offers.values())

    def delete_offer(self, offer_id: str) -> None:
        self.db.execute("DELETE FROM companion_offers WHERE id=?", (offer_id,))

    # --- uploads (phone -> desktop) ---------------------------------------------------------------
    def add_upload(self, s: IncomingSession, now: float) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO companion_uploads (id, device_id, created_at, last_activity, cancelled) "
                "VALUES (?, ?, ?, ?, ?)",
                (s.id, s.device_id, s.created_at, s.last_activity, int(s.cancelled)),
            )
            conn.executemany(
                "INSERT INTO companion_upload_files (upload_id, id, seq, name, size, mime, key_salt, received, "
                "part, state, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        s.id,
                        f.id,
                        f.seq,
                        f.name,
                        f.size,
                        f.mime,
                        f.key_salt,
                        f.received,
                        str(f.part or ""),
                        f.state.value,
                        now,
                    )
                    for f in s.files.values()
                ],
            )

    def update_upload_file(self, s: IncomingSession, f: IncomingFile, now: float) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE companion_upload_files SET received=?, part=?, state=?, saved_as=?, sha256=?, error=?, "
                "updated_at=? WHERE upload_id=? AND id=?",
                (
                    f.received,
                    str(f.part or ""),
                    f.state.value,
                    str(f.saved_as or ""),
                    f.sha256,
                    f.error,
                    now,
                    s.id,
                    f.id,
                ),
            )
            conn.execute("UPDATE companion_uploads SET last_activity=? WHERE id=?", (s.last_activity, s.id))

    def prune(self, before: float) -> None:
        """Forget offers and uploads older than ``before`` (their outcome was reported long ago)."""
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM companion_offers WHERE created_at<?", (before,))
            conn.execute("DELETE FROM companion_uploads WHERE last_activity<?", (before,))

    def load_uploads(self) -> list[IncomingSession]:
        """Uploads with a file still open (finished ones stay in the table for the daily quota)."""
        uploads = {
            r["id"]: IncomingSession(
                r["id"], r["device_id"], {}, r["created_at"], r["last_activity"], bool(r["cancelled"])
            )
            for r in self.db.query(
                "SELECT * FROM companion_uploads u WHERE cancelled=0 AND EXISTS (SELECT 1 FROM companion_upload_files f "
                "WHERE f.upload_id=u.id AND f.state IN (?, ?))",
                (FileState.QUEUED.value, FileState.SENDING.value),
            )
        }
        for r in self.db.query("SELECT * FROM companion_upload_files ORDER BY upload_id, seq"):
            s = uploads.get(r["upload_id"])
            if s is None:
                continue
            s.files[r["id"]] = IncomingFile(
                id=r["id"],
                seq=r["seq"],
                name=r["name"],
                size=r["size"],
                mime=r["mime"],
                key_salt=bytes(r["key_salt"]),
                received=r["received"],
                part=Path(r["part"]) if r["part"] else None,
                state=FileState(r["state"]),
                saved_as=Path(r["saved_as"]) if r["saved_as"] else None,
                sha256=r["sha256"],
                error=r["error"],
            )
        return list(uploads.values())

    def received_since(self, device_id: str, since: float) -> int:
        """Bytes this device's finished uploads saved since ``since`` (the daily quota)."""
        rows = self.db.query(
            "SELECT COALESCE(SUM(f.size), 0) AS n FROM companion_upload_files f JOIN companion_uploads u "
            "ON u.id = f.upload_id WHERE u.device_id=? AND f.state=? AND f.updated_at>=?",
            (device_id, FileState.DELIVERED.value, since),
        )
        return int(rows[0]["n"])
