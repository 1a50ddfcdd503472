"""The base schema of the conversation history (component ``history``): sessions, turns, messages, tool calls.

Registered when this module is imported; features add their own components after it (``history.reasoning``,
``history.conversation``), never a migration in this list. Never edit or renumber a shipped migration.
"""

from __future__ import annotations

from weclaw_desktop.storage.db import Migration, register_migrations

COMPONENT = "history"

register_migrations(
    COMPONENT,
    [
        Migration(
            1,
            """
            CREATE TABLE sessions (
                id TEXT PRIMARY KEY,
                title TEXT NOT NULL DEFAULT '',
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL,
                model TEXT NOT NULL DEFAULT '',
                origin TEXT NOT NULL DEFAULT ''
            );
            CREATE TABLE turns (
                run_id TEXT PRIMARY KEY,
                session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                started_at REAL NOT NULL,
                finished_at REAL,
                status TEXT NOT NULL DEFAULT 'running',
                rounds INTEGER NOT NULL DEFAULT 0,
                pid INTEGER NOT NULL DEFAULT 0,
                message TEXT NOT NULL DEFAULT ''
            );
            CREATE INDEX turns_session ON turns(session_id, started_at);
            CREATE TABLE messages (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                run_id TEXT NOT NULL DEFAULT '',
                round INTEGER NOT NULL DEFAULT 0,
                role TEXT NOT NULL,
                content TEXT NOT NULL DEFAULT '',
                tool_calls TEXT,
                tool_call_id TEXT,
                status TEXT NOT NULL DEFAULT 'complete',
                created_at REAL NOT NULL
            );
            CREATE INDEX messages_session ON messages(session_id, id);
            CREATE TABLE tool_calls (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                run_id TEXT NOT NULL,
                round INTEGER NOT NULL DEFAULT 0,
                call_id TEXT NOT NULL,
                function TEXT NOT NULL,
                tool TEXT NOT NULL DEFAULT '',
                action TEXT NOT NULL DEFAULT '',
                arguments TEXT NOT NULL DEFAULT '',
                status TEXT NOT NULL,
                output TEXT NOT NULL DEFAULT '',
                error TEXT NOT NULL DEFAULT '',
                files TEXT NOT NULL DEFAULT '[]',
                duration_ms REAL NOT NULL DEFAULT 0,
                truncated INTEGER NOT NULL DEFAULT 0,
                created_at REAL NOT NULL
            );
            CREATE INDEX tool_calls_run ON tool_calls(session_id, run_id);
            """,
        ),
    ],
)
