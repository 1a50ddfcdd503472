"""Long-term memory about the user: notes in SQLite with full-text search that works for Chinese.

Search uses an FTS5 index with the ``trigram`` tokenizer (SQLite >= 3.34), which matches any substring of
three or more characters, so Chinese needs no word segmentation: "三年级" finds "我儿子叫小宝，上三年级".
Terms shorter than three characters ("小宝") cannot be trigram-matched and go through ``LIKE``; so does
everything when this SQLite has no trigram tokenizer. Hits are ranked by how much of the query they
contain (longer terms weigh more), then by FTS5's bm25, then by recency.

:meth:`MemoryStore.relevant` is the looser variant the agent uses to put memories into the system
prompt: it also breaks a whole sentence ("小宝数学怎么样") into CJK bigrams and English words.

All methods are async and run SQLite in a worker thread.
"""

from __future__ import annotations

import difflib
import functools
import re
import sqlite3
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from weclaw_desktop.storage.db import Database, Migration, register_migrations

COMPONENT = "memory"
MAX_TEXT = 2000
DUPLICATE_RATIO = 0.9  # normalized texts at least this similar are the same note

register_migrations(
    COMPONENT,
    [
        Migration(
            1,
            """
            CREATE TABLE memory (
                id INTEGER PRIMARY KEY,
                text TEXT NOT NULL,
                norm TEXT NOT NULL,
                category TEXT NOT NULL DEFAULT '',
                tags TEXT NOT NULL DEFAULT '',
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL
            );
            CREATE INDEX memory_norm ON memory(norm);
            CREATE INDEX memory_category ON memory(category);
            """,
        ),
    ],
)

# The FTS table is created at runtime, not in a migration: whether it can exist depends on the SQLite
# library this Python was built with, and without it search still works (LIKE only).
_FTS_SQL = [
    "CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5("
    "text, tags, category, content='memory', content_rowid='id', tokenize='trigram')",
    "CREATE TRIGGER IF NOT EXISTS memory_ai AFTER INSERT ON memory BEGIN "
    "INSERT INTO memory_fts(rowid, text, tags, category) VALUES (new.id, new.text, new.tags, new.category); END",
    "CREATE TRIGGER IF NOT EXISTS memory_ad AFTER DELETE ON memory BEGIN "
    "INSERT INTO memory_fts(memory_fts, rowid, text, tags, category) "
    "VALUES ('delete', old.id, old.text, old.tags, old.category); END",
    "CREATE TRIGGER IF NOT EXISTS memory_au AFTER UPDATE ON memory BEGIN "
    "INSERT INTO memory_fts(memory_fts, rowid, text, tags, category) "
    "VALUES ('delete', old.id, old.text, old.tags, old.category); "
    "INSERT INTO memory_fts(rowid, text, tags, category) VALUES (new.id, new.text, new.tags, new.category); END",
]

_SPLIT = re.compile(r"[\s\u3000,.;:!?'\"()\[\]{}<>/\\|，。；：！？、“”‘’（）《》【】…—·~`@#$%^&*+=]+")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]+")
_WORD = re.compile(r"[a-z0-9][a-z0-9_'-]*")

# Very common words that say nothing about what a memory is about (used only by relevant()).
_STOP_EN_TEXT = (
    "the a an and or but is are was were be been to of in on at for with about what who how when where "
    "why which that this these those it its my your his her our their me you he she we they i do does did "
    "can could would should will shall may might have has had not no yes please tell know remember"
)
_STOP_ZH_TEXT = (
    "什么 怎么 怎样 这个 那个 这些 那些 我们 你们 他们 一个 没有 可以 就是 还是 知道 现在 时候 今天 "
    "帮我 一下 我的 你的 是不是 是什 么样 有没 多少 哪里 哪个 为什 如何 记得 告诉 请问 一些"
)
_STOP_EN = frozenset(_STOP_EN_TEXT.split())
_STOP_ZH = frozenset(_STOP_ZH_TEXT.split())


@functools.cache
def trigram_supported() -> bool:
    """Whether this SQLite has FTS5 with the trigram tokenizer (3.34 or newer, built with FTS5)."""
    try:
        conn = sqlite3.connect(":memory:")
        try:
            conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram')")
        finally:
            conn.close()
    except sqlite3.Error:
        return False
    return True


def normalize(text: str) -> str:
    """Compare form: NFKC, lower case, no whitespace or punctuation."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in folded if ch.isalnum())


def clean_tags(tags: list[str]) -> list[str]:
    out: list[str] = []
    for tag in tags:
        t = " ".join(unicodedata.normalize("NFKC", tag).split()).strip("#,，").lower()
        if t and t not in out:
            out.append(t)
    return out


def query_terms(query: str) -> list[str]:
    """The distinct terms of a search query, split on whitespace and punctuation (case-folded)."""
    terms: list[str] = []
    for piece in _SPLIT.split(unicodedata.normalize("NFKC", query).casefold()):
        if piece and piece not in terms:
            terms.append(piece)
    return terms


def fuzzy_terms(text: str, *, max_terms: int = 40) -> list[str]:
    """Terms for loose matching of a whole sentence: CJK bigrams and English words, minus stop words."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    terms: list[str] = []
    for run in _CJK.findall(folded):
        grams = [run[i : i + 2] for i in range(len(run) - 1)]  # single characters say too little
        terms += [g for g in grams if g not in _STOP_ZH]
    terms += [w for w in _WORD.findall(folded) if len(w) >= 2 and w not in _STOP_EN]
    unique: list[str] = []
    for t in terms:
        if t not in unique:
            unique.append(t)
    return unique[:max_terms]


@dataclass
class MemoryItem:
    id: int
    text: str
    category: str = ""
    tags: list[str] = field(default_factory=list)
    created_at: float = 0.0
    updated_at: float = 0.0
    score: float = 0.0

    def as_data(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "category": self.category, "tags": self.tags}


@dataclass
class SaveOutcome:
    item: MemoryItem
    created: bool  # False: an existing near-identical note was updated instead


def _row_item(row: sqlite3.Row, score: float = 0.0) -> MemoryItem:
    return MemoryItem(
        id=int(row["id"]),
        text=str(row["text"]),
        category=str(row["category"]),
        tags=[t for t in str(row["tags"]).split(",") if t],
        created_at=float(row["created_at"]),
        updated_at=float(row["updated_at"]),
        score=score,
    )


def _fts_phrase(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


_FTS_READY: dict[Path, bool] = {}  # per database file: FTS set up (True) or unavailable (False)


def _setup_fts(db: Database) -> bool:
    """Create the trigram index and its triggers if this SQLite can; else make sure no trigger needs it."""
    with db.transaction() as conn:
        had_triggers = conn.execute("SELECT 1 FROM sqlite_master WHERE name='memory_ai'").fetchone() is not None
        if not trigram_supported():
            # A database made by a newer SQLite: its triggers would make every save fail here.
            for name in ("memory_ai", "memory_ad", "memory_au"):
                conn.execute(f"DROP TRIGGER IF EXISTS {name}")
            return False
        for sql in _FTS_SQL:
            conn.execute(sql)
        if not had_triggers:  # notes saved while nothing kept the index up to date
            conn.execute("INSERT INTO memory_fts(memory_fts) VALUES ('rebuild')")
    return True


class MemoryStore:
    """Notes about the user in ``weclaw.db``. Safe to share; every method runs off the event loop."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._ready = False
        self.fts = False

    # --- setup ------------------------------------------------------------------------------------
    def _ensure(self) -> None:
        if self._ready:
            return
        key = self.db.path.resolve()
        known = _FTS_READY.get(key)
        if known is None:
            self.db.ensure(COMPONENT)
            known = _setup_fts(self.db)
            _FTS_READY[key] = known
        self.fts = known
        self._ready = True

    # --- public async API -----------------------------------------------------------------------
    async def save(self, text: str, *, tags: list[str] | None = None, category: str = "") -> SaveOutcome:
        return await self.db.run(self._save, text, tags or [], category)

    async def search(self, query: str, *, limit: int = 10, category: str = "") -> list[MemoryItem]:
        return await self.db.run(self._search, query, limit, category, False)

    async def relevant(self, text: str, limit: int = 5) -> list[MemoryItem]:
        """Memories related to ``text`` (a user message), best first; for the system prompt."""
        return await self.db.run(self._search, text, limit, "", True)

    async def get(self, ids: list[int]) -> list[MemoryItem]:
        return await self.db.run(self._get, ids)

    async def forget(self, ids: list[int]) -> list[MemoryItem]:
        """Delete these notes; returns the ones that existed."""
        return await self.db.run(self._forget, ids)

    async def count(self) -> int:
        return await self.db.run(self._count)

    async def recent(self, limit: int = 20) -> list[MemoryItem]:
        return await self.db.run(self._recent, limit)

    # --- blocking implementation ----------------------------------------------------------------
    def _save(self, text: str, tags: list[str], category: str) -> SaveOutcome:
        self._ensure()
        text = " ".join(text.split()) if "\n" not in text else text.strip()
        norm = normalize(text)
        if not norm:
            raise ValueError("the note has no letters or digits")
        tag_list = clean_tags(tags)
        category = " ".join(category.split()).lower()
        now = time.time()
        with self.db.transaction() as conn:
            dup = self._find_duplicate(conn, norm)
            if dup is not None:
                merged = clean_tags([*[t for t in str(dup["tags"]).split(",") if t], *tag_list])
                conn.execute(
                    "UPDATE memory SET text=?, norm=?, tags=?, category=?, updated_at=? WHERE id=?",
                    (text, norm, ",".join(merged), category or dup["category"], now, dup["id"]),
                )
                row = conn.execute("SELECT * FROM memory WHERE id=?", (dup["id"],)).fetchone()
                return SaveOutcome(_row_item(row), created=False)
            cur = conn.execute(
                "INSERT INTO memory(text, norm, category, tags, created_at, updated_at) VALUES (?,?,?,?,?,?)",
                (text, norm, category, ",".join(tag_list), now, now),
            )
            row = conn.execute("SELECT * FROM memory WHERE id=?", (cur.lastrowid,)).fetchone()
            return SaveOutcome(_row_item(row), created=True)

    def _find_duplicate(self, conn: sqlite3.Connection, norm: str) -> sqlite3.Row | None:
        exact: sqlite3.Row | None = conn.execute(
            "SELECT * FROM memory WHERE norm=? ORDER BY id LIMIT 1", (norm,)
        ).fetchone()
        if exact is not None:
            return exact
        n = len(norm)
        grams = list(dict.fromkeys(norm[i : i + 3] for i in range(len(norm) - 2)))
        if self.fts and grams:
            # A near-identical note shares most trigrams: bm25 over them finds it among thousands.
            step = max(1, len(grams) // 48)
            match = " OR ".join(_fts_phrase(g) for g in grams[::step])
            rows = conn.execute(
                "SELECT m.* FROM memory_fts JOIN memory m ON m.id = memory_fts.rowid WHERE memory_fts MATCH ? "
                "AND length(m.norm) BETWEEN ? AND ? ORDER BY bm25(memory_fts) LIMIT 20",
                (match, int(n * 0.8), int(n * 1.25) + 1),
            ).fetchall()
        else:
            rows = conn.execute(
                "SELECT * FROM memory WHERE length(norm) BETWEEN ? AND ? ORDER BY updated_at DESC LIMIT 2000",
                (int(n * 0.8), int(n * 1.25) + 1),
            ).fetchall()
        best: tuple[float, sqlite3.Row] | None = None
        for row in rows:
            matcher = difflib.SequenceMatcher(None, norm, str(row["norm"]), autojunk=False)
            if matcher.quick_ratio() < DUPLICATE_RATIO:
                continue
            ratio = matcher.ratio()
            if ratio >= DUPLICATE_RATIO and (best is None or ratio > best[0]):
                best = (ratio, row)
        return best[1] if best else None

    def _search(self, query: str, limit: int, category: str, fuzzy: bool) -> list[MemoryItem]:
        self._ensure()
        terms = query_terms(query)[:64]
        if fuzzy:
            terms = fuzzy_terms(query)
        if not terms:
            return []
        category = " ".join(category.split()).lower()
        conn = self.db.connect()
        candidates: dict[int, sqlite3.Row] = {}
        bm25: dict[int, float] = {}
        long_terms = [t for t in terms if len(t) >= 3]
        if self.fts and long_terms:
            match = " OR ".join(_fts_phrase(t) for t in long_terms[:64])
            sql = (
                "SELECT m.*, bm25(memory_fts) AS rank FROM memory_fts JOIN memory m ON m.id = memory_fts.rowid "
                "WHERE memory_fts MATCH ?" + (" AND m.category = ?" if category else "") + " ORDER BY rank LIMIT 500"
            )
            args: tuple[Any, ...] = (match, category) if category else (match,)
            for row in conn.execute(sql, args):
                candidates[int(row["id"])] = row
                bm25[int(row["id"])] = float(row["rank"])
        # Short terms (and every term without FTS): substring test on the normalized text and tags.
        # instr() on the stored normalized form is several times faster than LIKE with ESCAPE.
        keys = {t: normalize(t) for t in terms}
        short = [k for t, k in keys.items() if k and (len(t) < 3 or not self.fts)][:64]
        if short:
            where = " OR ".join("(instr(norm, ?) > 0 OR instr(tags, ?) > 0)" for _ in short)
            args = tuple(p for k in short for p in (k, k))
            if category:
                where = f"({where}) AND category = ?"
                args = (*args, category)
            for row in conn.execute(f"SELECT * FROM memory WHERE {where} ORDER BY updated_at DESC LIMIT 500", args):
                candidates.setdefault(int(row["id"]), row)
        scored: list[tuple[float, float, float, sqlite3.Row]] = []
        for mid, row in candidates.items():
            haystack = "\x00".join((str(row["norm"]), normalize(str(row["tags"])), normalize(str(row["category"]))))
            weight = float(sum(len(k) for k in keys.values() if k and k in haystack))
            if weight <= 0:
                continue
            scored.append((weight, bm25.get(mid, 0.0), float(row["updated_at"]), row))
        # Most of the query covered first; then bm25 (more negative is better); then newest.
        scored.sort(key=lambda s: (-s[0], s[1], -s[2]))
        return [_row_item(row, score=weight) for weight, _, _, row in scored[:limit]]

    def _get(self, ids: list[int]) -> list[MemoryItem]:
        self._ensure()
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = self.db.connect().execute(f"SELECT * FROM memory WHERE id IN ({marks}) ORDER BY id", tuple(ids))
        return [_row_item(r) for r in rows]

    def _forget(self, ids: list[int]) -> list[MemoryItem]:
        self._ensure()
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        with self.db.transaction() as conn:
            rows = conn.execute(f"SELECT * FROM memory WHERE id IN ({marks}) ORDER BY id", tuple(ids)).fetchall()
            conn.execute(f"DELETE FROM memory WHERE id IN ({marks})", tuple(ids))
        return [_row_item(r) for r in rows]

    def _count(self) -> int:
        self._ensure()
        return int(self.db.connect().execute("SELECT count(*) FROM memory").fetchone()[0])

    def _recent(self, limit: int) -> list[MemoryItem]:
        self._ensure()
        rows = self.db.connect().execute("SELECT * FROM memory ORDER BY updated_at DESC, id DESC LIMIT ?", (limit,))
        return [_row_item(r) for r in rows]


def format_for_prompt(items: list[MemoryItem]) -> str:
    """A short block for the system prompt: what is known about the user, one note a line."""
    if not items:
        return ""
    lines = [f"- {item.text}" + (f" [{', '.join(item.tags)}]" if item.tags else "") for item in items]
    return "Things you know about the user (from memory; may be outdated):\n" + "\n".join(lines)
