"""memory: save / search / forget through the dispatcher, Chinese full-text search, and the prompt API."""

from __future__ import annotations

import pytest
from tools.db_support import Caller

from weclaw_desktop.paths import app_paths
from weclaw_desktop.storage.db import Database
from weclaw_desktop.toolkit.base import ToolStatus
from weclaw_desktop.tools import memory_store
from weclaw_desktop.tools._db import forget_database
from weclaw_desktop.tools.memory_store import MemoryStore, format_for_prompt

SON = "我儿子叫小宝，上三年级"


async def test_chinese_note_is_found_by_short_and_long_substrings(call: Caller, db: Database) -> None:
    saved = await call("memory_save", text=SON, tags=["家庭"], category="family")
    assert saved.succeeded, saved.output
    other = await call("memory_save", text="我喜欢喝乌龙茶，不加糖")
    note_id, tea_id = saved.data["id"], other.data["id"]
    assert note_id != tea_id

    for query in ("小宝", "三年级", "儿子 三年级", "家庭"):  # 2 chars -> LIKE, 3 chars -> FTS trigram, tag
        found = await call("memory_search", query=query)
        assert found.succeeded
        assert found.data["ids"] == [note_id], query
        assert SON in found.output
    assert (await call("memory_search", query="乌龙茶")).data["ids"] == [tea_id]
    assert (await call("memory_search", query="游泳课")).data["ids"] == []
    # This machine's SQLite has the trigram tokenizer, so the FTS index is in use (fallback: test below).
    assert memory_store.trigram_supported()
    assert len(db.query("SELECT name FROM sqlite_master WHERE name = 'memory_fts'")) == 1


async def test_search_ranks_the_note_covering_more_of_the_query_first(call: Caller) -> None:
    a = (await call("memory_save", text="User works at Acme as a data engineer")).data["id"]
    b = (await call("memory_save", text="User's wife works at a hospital")).data["id"]
    c = (await call("memory_save", text="Favourite food: dumplings")).data["id"]
    found = await call("memory_search", query="works engineer")
    assert found.data["ids"] == [a, b]
    assert c not in found.data["ids"]
    assert (await call("memory_search", query="WORKS", limit=1)).data["ids"] in ([a], [b])


async def test_near_identical_note_updates_instead_of_duplicating(call: Caller, db: Database) -> None:
    first = await call("memory_save", text=SON, tags=["家庭"])
    again = await call("memory_save", text="我儿子叫小宝, 上三年级。", tags=["孩子"])
    english = await call("memory_save", text="User prefers dark mode in editors")
    english2 = await call("memory_save", text="The user prefers dark mode in editors")
    assert first.data["created"] is True and again.data["created"] is False
    assert again.data["id"] == first.data["id"]
    assert again.data["tags"] == ["家庭", "孩子"]
    assert english2.data["id"] == english.data["id"] and english2.data["created"] is False
    assert await MemoryStore(db).count() == 2


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"text": ""}, "text"),  # empty: schema validation
        ({"text": "x" * 2001}, "text"),  # too long
        ({"text": "!!! ……"}, "no letters or digits"),  # nothing to remember
        ({"text": "ok", "tags": ["t"] * 11}, "tags"),
    ],
)
async def test_save_rejects_bad_input_and_keeps_existing_notes(
    call: Caller, db: Database, arguments: dict[str, object], expected: str
) -> None:
    await call("memory_save", text=SON)
    result = await call("memory_save", **arguments)
    assert result.status is ToolStatus.ERROR
    assert expected in result.output
    assert [i.text for i in await MemoryStore(db).recent()] == [SON]  # the old note survives, nothing added


async def test_search_rejects_bad_input(call: Caller) -> None:
    await call("memory_save", text=SON)
    empty = await call("memory_search", query="")
    assert empty.status is ToolStatus.ERROR and "query" in empty.output
    zero = await call("memory_search", query="小宝", limit=0)
    assert zero.status is ToolStatus.ERROR and "limit" in zero.output
    unknown = await call("memory_search", query="小宝", fuzzy=True)
    assert unknown.status is ToolStatus.ERROR and "unknown argument 'fuzzy'" in unknown.output
    punctuation_only = await call("memory_search", query="，。！")
    assert punctuation_only.succeeded and punctuation_only.data["ids"] == []


async def test_search_by_category(call: Caller) -> None:
    family = (await call("memory_save", text=SON, category="Family")).data["id"]
    await call("memory_save", text="小宝 is also the name of the neighbour's dog", category="neighbours")
    found = await call("memory_search", query="小宝", category="family")
    assert found.data["ids"] == [family]
    assert len((await call("memory_search", query="小宝")).data["ids"]) == 2


async def test_forget_by_id_and_by_single_matching_text(call: Caller, db: Database) -> None:
    son = (await call("memory_save", text=SON)).data["id"]
    tea = (await call("memory_save", text="我喜欢喝乌龙茶")).data["id"]
    car = (await call("memory_save", text="Drives a blue Tesla")).data["id"]
    by_id = await call("memory_forget", ids=[tea])
    assert by_id.succeeded and by_id.data["deleted"] == [tea]
    by_text = await call("memory_forget", text="三年级")
    assert by_text.succeeded and by_text.data["deleted"] == [son]
    assert [i.id for i in await MemoryStore(db).recent()] == [car]


async def test_forget_refuses_ambiguous_unknown_and_conflicting_requests(call: Caller, db: Database) -> None:
    a = (await call("memory_save", text="小宝喜欢恐龙")).data["id"]
    b = (await call("memory_save", text="小宝对花生过敏")).data["id"]

    ambiguous = await call("memory_forget", text="小宝")
    assert ambiguous.status is ToolStatus.ERROR
    assert "2 notes match" in ambiguous.output and f"#{a}" in ambiguous.output and f"#{b}" in ambiguous.output
    unknown = await call("memory_forget", ids=[a, 999])
    assert unknown.status is ToolStatus.ERROR and "999" in unknown.output
    neither = await call("memory_forget")
    assert neither.status is ToolStatus.ERROR and "ids" in neither.output
    both = await call("memory_forget", ids=[a], text="小宝")
    assert both.status is ToolStatus.ERROR and "not both" in both.output
    no_match = await call("memory_forget", text="小宝 游泳")  # every word must match, not just one
    assert no_match.status is ToolStatus.ERROR
    assert await MemoryStore(db).count() == 2  # nothing was deleted by any of them

    everything = await call("memory_forget", text="小宝", all_matches=True)
    assert everything.succeeded and sorted(everything.data["deleted"]) == [a, b]
    assert await MemoryStore(db).count() == 0


async def test_relevant_finds_memories_for_a_whole_user_message(db: Database) -> None:
    store = MemoryStore(db)
    son = (await store.save(SON)).item
    await store.save("我喜欢喝乌龙茶")
    dark = (await store.save("Prefers dark mode in every editor")).item

    assert [i.id for i in await store.relevant("小宝最近数学考得怎么样？")] == [son.id]
    assert [i.id for i in await store.relevant("Which editor theme should I pick, dark or light?")] == [dark.id]
    assert await store.relevant("今天天气怎么样") == []  # only stop words and unrelated bigrams
    block = format_for_prompt(await store.relevant("小宝的生日"))
    assert block.endswith(f"- {SON}")


async def test_like_fallback_without_trigram_tokenizer(
    monkeypatch: pytest.MonkeyPatch, ctx: object, weclaw_home: object
) -> None:
    monkeypatch.setattr(memory_store, "trigram_supported", lambda: False)
    db = Database(app_paths().ensure().data / "no-fts.db")
    store = MemoryStore(db)
    note = (await store.save(SON)).item
    assert store.fts is False
    assert [i.id for i in await store.search("三年级")] == [note.id]
    assert [i.id for i in await store.search("小宝")] == [note.id]
    assert db.query("SELECT name FROM sqlite_master WHERE name = 'memory_fts'") == []
    db.close()


async def test_notes_and_index_survive_a_restart(call: Caller) -> None:
    note = (await call("memory_save", text=SON)).data["id"]
    forget_database(app_paths().database)  # the app closes
    reopened = Database(app_paths().database)
    try:
        store = MemoryStore(reopened)
        assert [i.id for i in await store.search("三年级")] == [note]
        assert [i.id for i in await store.search("小宝")] == [note]
    finally:
        reopened.close()


async def test_database_moves_between_sqlite_with_and_without_trigram(
    monkeypatch: pytest.MonkeyPatch, weclaw_home: object
) -> None:
    path = app_paths().ensure().data / "moved.db"

    async def session(trigram: bool, text: str | None) -> list[int]:
        """One app run: maybe save a note, then search for '三年级'."""
        monkeypatch.setattr(memory_store, "trigram_supported", lambda: trigram)
        memory_store._FTS_READY.pop(path.resolve(), None)  # a new process knows nothing yet
        db = Database(path)
        try:
            store = MemoryStore(db)
            if text:
                await store.save(text)
            return [i.id for i in await store.search("三年级")]
        finally:
            db.close()

    assert await session(True, SON) == [1]  # made with FTS (triggers exist)
    assert sorted(await session(False, "女儿上三年级了")) == [1, 2]  # older SQLite: saving still works
    assert await session(False, None) == [2, 1]  # substring scan, newest first
    assert await session(True, None) == [2, 1]  # FTS again: the index was rebuilt and has note 2
