"""Attachments of turns in the history (``attachments`` table of ``history.conversation``).

Written before the turn's user message (keyed by the turn), so a crash leaves either both or rows of a turn
that never started (ignored: they join no turn)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

from weclaw_desktop.attachments import Attachment
from weclaw_desktop.storage.db import Database

_COLUMNS = ("name", "kind", "mime", "size", "path", "text", "chars", "truncated", "note")


class AttachmentRows:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(self, session_id: str, run_id: str, attachments: Sequence[Attachment]) -> None:
        if attachments:
            await self.db.run(self._add, session_id, run_id, list(attachments))

    def _add(self, session_id: str, run_id: str, attachments: list[Attachment]) -> None:
        now = time.time()
        with self.db.transaction() as conn:
            conn.executemany(
                f"INSERT INTO attachments(session_id, run_id, position, {', '.join(_COLUMNS)}, created_at) "
                f"VALUES(?,?,?,{', '.join('?' for _ in _COLUMNS)},?)",
                [
                    (
                        session_id,
                        run_id,
                        i,
                        a.name,
                        a.kind,
                        a.mime,
                        a.size,
                        a.path,
                        a.text,
                        a.chars,
                        int(a.truncated),
                        a.note,
                        now,
                    )
                    for i, a in enumerate(attachments)
                ],
            )

    def by_run_sync(self, session_id: str, runs: Iterable[str] | None = None) -> dict[str, list[Attachment]]:
        rows = self.db.query(
            f"SELECT run_id, {', '.join(_COLUMNS)} FROM attachments WHERE session_id=? ORDER BY run_id, position",
            (session_id,),
        )
        wanted = None if runs is None else set(runs)
        out: dict[str, list[Attachment]] = {}
        for r in rows:
            if wanted is not None and r["run_id"] not in wanted:
                continue
            out.setdefault(r["run_id"], []).append(
                Attachment(
                    name=r["name"],
                    kind=r["kind"] if r["kind"] in ("text", "image", "file") else "file",
                    mime=r["mime"],
                    size=r["size"],
                    path=r["path"],
                    text=r["text"],
                    chars=r["chars"],
                    truncated=bool(r["truncated"]),
                    note=r["note"],
                )
            )
        return out

    async def by_run(self, session_id: str, runs: Iterable[str] | None = None) -> dict[str, list[Attachment]]:
        return await self.db.run(self.by_run_sync, session_id, None if runs is None else list(runs))
