"""SQLite storage shared by history, audit, memory, todos, reminders and companion devices."""

from weclaw_desktop.storage.db import Database, Migration, register_migrations

__all__ = ["Database", "Migration", "register_migrations"]
