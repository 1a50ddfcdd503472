"""The history tables of the conversation features (their own migration component, applied after ``history``'s).

- ``turn_tree``: which turn each turn follows (``parent_run``, '' for the first) and how it came to be (``kind``:
  new, edit, regenerate, retry, import). Edits and regenerations are siblings under the same parent: branches.
  A row is written *before* its turn (so a crash never leaves a turn without one); rows whose turn never
  started are ignored. Turns without a row (chats from before branches) follow the turn started before them.
- ``branch_choice``: the sibling the user last chose at a parent (none: the newest sibling).
- ``chat_setup``: what a chat remembers: provider configuration, model, assistant, custom instructions, and
  where its title came from (auto / model / user).
- ``attachments``: files sent with a turn's user message (the text extracted from them, or the app's copy of an
  image), keyed by the turn.
- ``usage``: tokens of every model request (round), from the endpoint or estimated, with the provider and
  model that answered (prices are applied when shown, so an edited price applies to the past too).
"""

from __future__ import annotations

from weclaw_desktop.storage.db import Migration, register_migrations

CONVERSATION_COMPONENT = "history.conversation"

_V1 = """
CREATE TABLE turn_tree (
    run_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    parent_run TEXT NOT NULL DEFAULT '',
    kind TEXT NOT NULL DEFAULT 'new',
    created_at REAL NOT NULL
);
CREATE INDEX turn_tree_parent ON turn_tree(session_id, parent_run);
CREATE TABLE branch_choice (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    parent_run TEXT NOT NULL,
    run_id TEXT NOT NULL,
    PRIMARY KEY (session_id, parent_run)
);
CREATE TABLE chat_setup (
    session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    provider TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    assistant TEXT NOT NULL DEFAULT '',
    instructions TEXT NOT NULL DEFAULT '',
    title_source TEXT NOT NULL DEFAULT 'auto'
);
CREATE TABLE attachments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    run_id TEXT NOT NULL,
    position INTEGER NOT NULL DEFAULT 0,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    mime TEXT NOT NULL DEFAULT '',
    size INTEGER NOT NULL DEFAULT 0,
    path TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL DEFAULT '',
    chars INTEGER NOT NULL DEFAULT 0,
    truncated INTEGER NOT NULL DEFAULT 0,
    note TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL
);
CREATE INDEX attachments_run ON attachments(session_id, run_id);
CREATE TABLE usage (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    run_id TEXT NOT NULL,
    round INTEGER NOT NULL DEFAULT 0,
    provider TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    estimated INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL
);
CREATE INDEX usage_session ON usage(session_id, run_id);
INSERT INTO turn_tree(run_id, session_id, parent_run, kind, created_at)
SELECT t.run_id, t.session_id,
       COALESCE((SELECT p.run_id FROM turns p
                 WHERE p.session_id = t.session_id
                   AND (p.started_at < t.started_at OR (p.started_at = t.started_at AND p.run_id < t.run_id))
                 ORDER BY p.started_at DESC, p.run_id DESC LIMIT 1), ''),
       'new', t.started_at
FROM turns t;
"""


def register() -> None:
    """Called by agent/history.py right after its own migrations (``Database.open`` applies in that order)."""
    register_migrations(CONVERSATION_COMPONENT, [Migration(1, _V1)])
