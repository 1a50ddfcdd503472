"""The history's tool-call columns added after the base schema (component ``history.calls``).

``tool_calls.waited_ms``: the part of ``duration_ms`` the call spent waiting for the user's approval, as the
dispatcher measured it (``CallOutcome.waited_ms``). NULL means "not known": a row written before this column, or
a call that did not finish and got its result from the loop. A reader then shows the whole duration as before
(``agent/transcript.py``, ``agent/call_times.py``).

Its own migration component (applied after ``history``'s), as the base schema's rule says: never a migration in
that list.
"""

from __future__ import annotations

from weclaw_desktop.storage.db import Migration, register_migrations

CALLS_COMPONENT = "history.calls"


def register() -> None:
    """Called by agent/history.py after its own migrations (``Database.open`` applies in that order)."""
    register_migrations(CALLS_COMPONENT, [Migration(1, "ALTER TABLE tool_calls ADD COLUMN waited_ms REAL;")])
