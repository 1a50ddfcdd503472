"""The history's reasoning columns: a reasoning model's thinking stored with its assistant message.

``messages.reasoning`` holds the thinking text (shown again in the Thinking block when a chat is reopened);
``messages.meta`` (JSON) what else the endpoint attached that may have to go back to it: the field the reasoning
came in, opaque fields such as ``reasoning_details``, who wrote the message (``source``) and how long it thought
(``reasoning_ms``). Which of it is sent back, and when, is the provider profile's rule (agent/provider/messages.py).

Its own migration component (applied after ``history``'s), so other features' history migrations never collide
with it.
"""

from __future__ import annotations

import json
from typing import Any

from weclaw_desktop.storage.db import Migration, register_migrations

REASONING_COMPONENT = "history.reasoning"


def register() -> None:
    """Register the migrations; called by agent/history.py right after its own, so that ``Database.open`` (which
    applies components in registration order) adds these columns after the messages table exists."""
    register_migrations(
        REASONING_COMPONENT,
        [
            Migration(
                1,
                """
                ALTER TABLE messages ADD COLUMN reasoning TEXT NOT NULL DEFAULT '';
                ALTER TABLE messages ADD COLUMN meta TEXT;
                """,
            ),
        ],
    )


def parse_meta(raw: str | None) -> dict[str, Any]:
    """The stored meta of a message; {} when there is none or it cannot be read (never an error)."""
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
