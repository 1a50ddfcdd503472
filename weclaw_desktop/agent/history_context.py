"""The routing context of a new turn, read from the stored conversation: the earlier turns' user text, the
assistant's final answer, the tools each turn called and the files they made (``intent.conversation``).

Read-only over :class:`~weclaw_desktop.agent.history.HistoryStore` (no schema of its own). Only the last
``turns`` turns are kept: routing looks back a few tool-using turns, not the whole session.
"""

from __future__ import annotations

from weclaw_desktop.agent.history import HistoryStore
from weclaw_desktop.intent.conversation import Conversation, Turn

TURNS = 8  # earlier turns given to routing


async def conversation_before(
    history: HistoryStore, session_id: str, run_id: str, *, turns: int = TURNS
) -> Conversation:
    """The turns of ``session_id`` before the turn ``run_id`` (which is excluded), oldest first."""
    messages = await history.messages(session_id)
    calls = await history.tool_calls(session_id)
    order: list[str] = []
    user: dict[str, str] = {}
    answer: dict[str, str] = {}
    for m in messages:
        if not m.run_id or m.run_id == run_id:
            continue
        if m.role == "user":
            if m.run_id not in user:
                order.append(m.run_id)
            user[m.run_id] = m.content
        elif m.role == "assistant" and m.content.strip():
            answer[m.run_id] = m.content  # the last text of the turn is its answer
    tools: dict[str, list[str]] = {}
    files: dict[str, list[str]] = {}
    for c in calls:
        if c.run_id == run_id or not c.tool:
            continue
        named = tools.setdefault(c.run_id, [])
        if c.tool not in named:
            named.append(c.tool)
        files.setdefault(c.run_id, []).extend(c.files)
    return Conversation(
        [
            Turn(
                user=user[r],
                assistant=answer.get(r, ""),
                tools=tuple(tools.get(r, ())),
                files=tuple(files.get(r, ())),
            )
            for r in order[-turns:]
        ]
    )
