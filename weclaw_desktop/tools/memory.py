"""The memory tool: save, search and forget long-term notes about the user (store: memory_store.py)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from weclaw_desktop.toolkit.base import BaseTool, ToolContext, ToolError, ToolResult, action
from weclaw_desktop.tools._db import tool_database
from weclaw_desktop.tools.memory_store import MAX_TEXT, MemoryItem, MemoryStore, normalize, query_terms

MAX_FORGET = 50


class MemoryConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_results: int = Field(default=20, ge=1, le=100, description="Most notes one search returns")


class SaveParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(
        min_length=1,
        max_length=MAX_TEXT,
        description="The fact to remember, as one self-contained sentence in the user's language, "
        "e.g. '我儿子叫小宝，上三年级' or 'Prefers meetings after 10am'.",
    )
    tags: list[str] = Field(
        default_factory=list, max_length=10, description="Optional short keywords that help find it later"
    )
    category: str = Field(
        default="", max_length=40, description="Optional group such as family, work, preference, health"
    )


class SearchParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(
        min_length=1,
        max_length=500,
        description="Words to look for, separated by spaces; any part of a word works, Chinese too "
        "(e.g. '小宝' or '三年级 学校').",
    )
    limit: int = Field(default=10, ge=1, le=100, description="How many notes to return at most")
    category: str = Field(default="", max_length=40, description="Only notes of this category ('' = all)")


class ForgetParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ids: list[int] = Field(
        default_factory=list, max_length=MAX_FORGET, description="Ids of the notes to delete (from search)"
    )
    text: str = Field(
        default="",
        max_length=500,
        description="Instead of ids: delete the note that matches this text (search words)",
    )
    all_matches: bool = Field(
        default=False, description="With text: delete every matching note, not only a single match"
    )

    @model_validator(mode="after")
    def _one_way(self) -> ForgetParams:
        if not self.ids and not self.text.strip():
            raise ValueError("give the ids of the notes to forget, or a text that matches them")
        if self.ids and self.text.strip():
            raise ValueError("give either ids or text, not both")
        return self


def _line(item: MemoryItem) -> str:
    extra = []
    if item.category:
        extra.append(item.category)
    if item.tags:
        extra.append("#" + " #".join(item.tags))
    suffix = f"  ({'; '.join(extra)})" if extra else ""
    return f"#{item.id}: {item.text}{suffix}"


class MemoryTool(BaseTool):
    Config = MemoryConfig

    @staticmethod
    def _store(ctx: ToolContext) -> MemoryStore:
        return MemoryStore(tool_database(ctx))

    @action(
        "Remember a fact about the user for future conversations (family, preferences, plans, names). "
        "Use it when the user tells you something worth keeping or says 'remember ...'. A note that "
        "repeats an existing one updates it instead of adding a copy."
    )
    async def save(self, params: SaveParams, ctx: ToolContext) -> ToolResult:
        if not normalize(params.text):
            raise ToolError("The note has no letters or digits. Send the fact to remember as text.")
        outcome = await self._store(ctx).save(params.text, tags=params.tags, category=params.category)
        item = outcome.item
        if outcome.created:
            text = f"Remembered as note #{item.id}: {item.text}"
        else:
            text = f"This was already remembered; updated note #{item.id}: {item.text}"
        return ToolResult.ok(text, data={"id": item.id, "created": outcome.created, "tags": item.tags})

    @action(
        "Search what you remember about the user. Use it before answering questions about the user's "
        "life, family or preferences, and to find the id of a note to forget. Returns notes best match "
        "first, with their ids."
    )
    async def search(self, params: SearchParams, ctx: ToolContext) -> ToolResult:
        limit = min(params.limit, self.config.max_results)
        items = await self._store(ctx).search(params.query, limit=limit, category=params.category)
        if not items:
            return ToolResult.ok(
                f"No memory matches '{params.query}'. Try fewer or shorter words.", data={"ids": [], "results": []}
            )
        lines = "\n".join(_line(i) for i in items)
        return ToolResult.ok(
            f"{len(items)} memor{'y' if len(items) == 1 else 'ies'} found:\n{lines}",
            data={"ids": [i.id for i in items], "results": [i.as_data() for i in items]},
        )

    @action(
        "Delete notes from memory when the user asks you to forget something or a note is wrong. "
        "Give the note ids (from memory_search) or a text; when a text matches several notes nothing is "
        "deleted unless all_matches is true, so check the list and call again with ids."
    )
    async def forget(self, params: ForgetParams, ctx: ToolContext) -> ToolResult:
        store = self._store(ctx)
        if params.ids:
            ids = list(dict.fromkeys(params.ids))
            existing = {i.id for i in await store.get(ids)}
            missing = [i for i in ids if i not in existing]
            if missing:
                raise ToolError(
                    f"No memory with id {', '.join(map(str, missing))}; nothing was deleted. "
                    "Use memory_search to find the right ids."
                )
        else:
            # Every word of the text must match (search alone ranks notes that match any word).
            keys = [k for k in (normalize(t) for t in query_terms(params.text)) if k]
            candidates = await store.search(params.text, limit=500)
            matches = [
                i for i in candidates if all(k in normalize(f"{i.text} {' '.join(i.tags)} {i.category}") for k in keys)
            ]
            if not matches:
                raise ToolError(f"No memory matches '{params.text}'; nothing was deleted.")
            if len(matches) > 1 and not params.all_matches:
                listed = "\n".join(_line(i) for i in matches[:MAX_FORGET])
                raise ToolError(
                    f"{len(matches)} notes match '{params.text}', so nothing was deleted. "
                    f"Call again with the ids to delete (or all_matches=true):\n{listed}"
                )
            if len(matches) > MAX_FORGET:
                raise ToolError(f"More than {MAX_FORGET} notes match; nothing was deleted. Be more specific.")
            ids = [i.id for i in matches]
        deleted = await store.forget(ids)
        lines = "\n".join(_line(i) for i in deleted)
        return ToolResult.ok(
            f"Forgot {len(deleted)} note{'s' if len(deleted) != 1 else ''}:\n{lines}",
            data={"deleted": [i.id for i in deleted]},
        )
