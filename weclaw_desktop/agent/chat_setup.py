"""What a chat remembers about itself: which provider configuration and model answer it, which assistant it
started from, its custom instructions, and whether its title was written by the user (``chat_setup`` table of
``history.conversation``). A chat without a row uses the defaults of the settings at the time of each turn."""

from __future__ import annotations

import time
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

from weclaw_desktop.storage.db import Database

TitleSource = Literal["auto", "model", "user"]


@dataclass(frozen=True)
class ChatSetup:
    provider: str = ""  # name of a saved provider configuration; '' = the active one
    model: str = ""  # '' = that configuration's model
    assistant: str = ""  # assistant id; '' = the default assistant
    instructions: str = ""  # this chat's custom instructions (added to the system prompt)
    title_source: TitleSource = "auto"


_COLUMNS = tuple(f.name for f in fields(ChatSetup))


class ChatSetups:
    def __init__(self, db: Database) -> None:
        self.db = db

    def get_sync(self, session_id: str) -> ChatSetup:
        rows = self.db.query(f"SELECT {', '.join(_COLUMNS)} FROM chat_setup WHERE session_id=?", (session_id,))
        if not rows:
            return ChatSetup()
        values: dict[str, Any] = {name: rows[0][name] for name in _COLUMNS}
        if values["title_source"] not in ("auto", "model", "user"):
            values["title_source"] = "auto"
        return ChatSetup(**values)

    async def get(self, session_id: str) -> ChatSetup:
        return await self.db.run(self.get_sync, session_id)

    async def update(self, session_id: str, **changes: Any) -> ChatSetup:
        """Change some fields (the others keep their value). Raises KeyError for a chat that does not exist."""
        unknown = set(changes) - set(_COLUMNS)
        if unknown:
            raise TypeError(f"not chat settings: {', '.join(sorted(unknown))}")
        return await self.db.run(self._update, session_id, changes)

    async def set_title(self, session_id: str, title: str, source: TitleSource) -> bool:
        """Set the title and where it came from in one transaction. A generated title (auto/model) never
        replaces the user's own and leaves the chat's place in the list; the user's title moves it up."""
        return bool(await self.db.run(self._set_title, session_id, " ".join(title.split())[:200], source))

    def _set_title(self, session_id: str, title: str, source: str) -> bool:
        with self.db.transaction() as conn:
            row = conn.execute("SELECT title_source FROM chat_setup WHERE session_id=?", (session_id,)).fetchone()
            if source != "user" and row is not None and row["title_source"] == "user":
                return False
            if source == "user":
                cur = conn.execute(
                    "UPDATE sessions SET title=?, updated_at=? WHERE id=?", (title, time.time(), session_id)
                )
            else:
                cur = conn.execute("UPDATE sessions SET title=? WHERE id=?", (title, session_id))
            if cur.rowcount == 0:
                return False
            conn.execute(
                "INSERT INTO chat_setup(session_id, title_source) VALUES(?, ?) "
                "ON CONFLICT(session_id) DO UPDATE SET title_source=excluded.title_source",
                (session_id, source),
            )
        return True

    def _update(self, session_id: str, changes: dict[str, Any]) -> ChatSetup:
        with self.db.transaction() as conn:
            if conn.execute("SELECT 1 FROM sessions WHERE id=?", (session_id,)).fetchone() is None:
                raise KeyError(f"no session {session_id}")
            setup = replace(self.get_sync(session_id), **changes)
            conn.execute(
                f"INSERT OR REPLACE INTO chat_setup(session_id, {', '.join(_COLUMNS)}) "
                f"VALUES(?, {', '.join('?' for _ in _COLUMNS)})",
                (session_id, *(getattr(setup, c) for c in _COLUMNS)),
            )
        return setup
