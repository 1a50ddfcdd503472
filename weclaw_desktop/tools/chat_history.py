"""chat_history: search earlier conversations and list them.

The history database belongs to the agent layer, which sits above the tools; the agent runtime injects
its history store as the ``history`` bridge (see :class:`HistoryBridge`), so this module imports nothing
from the agent.
"""

from __future__ import annotations

import time
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.toolkit import BaseTool, ToolContext, ToolError, ToolResult, action


@runtime_checkable
class HistoryBridge(Protocol):
    """What the tool needs from the history store (``agent.history.HistoryStore`` provides it)."""

    async def search(self, query: str, limit: int = 20) -> list[Any]:
        """Hits with session_id, title, message_id, role, snippet, created_at."""
        ...

    async def list_sessions(self, limit: int = 200, offset: int = 0) -> list[Any]:
        """Sessions with id, title, created_at, updated_at, message_count."""
        ...


class SearchParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(
        description="Words to find in earlier messages; every word must appear (works for Chinese too).",
        min_length=1,
        max_length=200,
    )
    limit: int = Field(default=10, ge=1, le=50, description="Maximum number of matching messages to return.")


class ListParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    limit: int = Field(default=20, ge=1, le=100, description="How many conversations to list, newest first.")


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


class ChatHistoryTool(BaseTool):
    def _store(self) -> HistoryBridge:
        store = self.bridge("history")
        if not isinstance(store, HistoryBridge):
            raise ToolError("The chat history is not available in this mode.")
        return store

    @action(
        "Search the user's earlier conversations with you for messages containing the given words. "
        "Use it when the user refers to something discussed before ('what did we say about…', "
        "'上次说的…')."
    )
    async def search(self, params: SearchParams, ctx: ToolContext) -> ToolResult:
        query = " ".join(params.query.split())
        if not query:
            raise ToolError("The query is empty. Give one or more words to look for.")
        hits = await self._store().search(query, params.limit)
        if not hits:
            return ToolResult.ok(f"No earlier message contains: {query}", data={"count": 0})
        lines = [f"{len(hits)} message(s) containing '{query}', newest first:"]
        data = []
        for h in hits:
            where = "this conversation" if h.session_id == ctx.session_id else f"'{h.title or 'untitled'}'"
            lines.append(f"- {_when(h.created_at)} in {where} ({h.role}): {h.snippet}")
            data.append({"session_id": h.session_id, "message_id": h.message_id, "role": h.role})
        return ToolResult.ok("\n".join(lines), data={"count": len(hits), "hits": data})

    @action("List the user's recent conversations (title, date, size), newest first.")
    async def list_sessions(self, params: ListParams, ctx: ToolContext) -> ToolResult:
        sessions = await self._store().list_sessions(params.limit)
        if not sessions:
            return ToolResult.ok("There are no saved conversations yet.", data={"count": 0})
        lines = [f"{len(sessions)} conversation(s), newest first:"]
        for s in sessions:
            current = " (this one)" if s.id == ctx.session_id else ""
            lines.append(f"- {_when(s.updated_at)} '{s.title or 'untitled'}' — {s.message_count} messages{current}")
        return ToolResult.ok(
            "\n".join(lines),
            data={"count": len(sessions), "ids": [s.id for s in sessions]},
        )
