"""How fast memory search is on a big memory: ``python bench/memory_search.py [notes]``.

Fills a temporary weclaw.db with synthetic notes (Chinese and English), then times search for a 2-char
Chinese term (substring scan on the normalized text), a 3+ char term (FTS5 trigram), a multi-word query, and relevant() on a whole
user message (bigram path). Prints median and p99 in milliseconds.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from weclaw_desktop.storage.db import Database
from weclaw_desktop.tools.memory_store import MemoryStore, normalize

ZH = "我你他她儿子女儿妈妈爸爸喜欢学校公司周末游泳钢琴数学医生北京上海咖啡茶早上晚上生日朋友旅行"
EN = [
    "likes",
    "works",
    "lives",
    "prefers",
    "visits",
    "studies",
    "plays",
    "reads",
    "coffee",
    "tea",
    "piano",
    "swimming",
    "doctor",
    "school",
    "office",
]


def note(rng: random.Random, i: int) -> str:
    if i % 2:
        return "".join(rng.choice(ZH) for _ in range(rng.randint(8, 30))) + f"，编号{i}"
    return " ".join(rng.choice(EN) for _ in range(rng.randint(5, 15))) + f" #{i}"


def fill(db: Database, n: int) -> None:
    rng = random.Random(7)
    store = MemoryStore(db)
    store._ensure()
    now = time.time()
    with db.transaction() as conn:
        for i in range(n):
            text = note(rng, i)
            conn.execute(
                "INSERT INTO memory(text, norm, category, tags, created_at, updated_at) VALUES (?,?,?,?,?,?)",
                (text, normalize(text), "", "", now, now),
            )


async def timed(label: str, fn, runs: int = 50) -> None:  # type: ignore[no-untyped-def]
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        await fn()
        samples.append((time.perf_counter() - t0) * 1000)
    samples.sort()
    p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))]
    print(f"{label:<42} median {statistics.median(samples):7.2f} ms   p99 {p99:7.2f} ms")


async def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(Path(tmp) / "weclaw.db")
        t0 = time.perf_counter()
        fill(db, n)
        print(f"{n} notes inserted in {time.perf_counter() - t0:.2f} s")
        store = MemoryStore(db)
        await timed("search '钢琴' (2 chars, substring scan)", lambda: store.search("钢琴"))
        await timed("search '游泳钢' (3 chars, FTS trigram)", lambda: store.search("游泳钢"))
        await timed("search 'piano swimming' (2 FTS terms)", lambda: store.search("piano swimming"))
        await timed("relevant('我女儿周末学钢琴怎么样')", lambda: store.relevant("我女儿周末学钢琴怎么样"))
        await timed("save (dedup check + insert)", lambda: store.save(f"bench note {time.time_ns()}"), runs=30)
        db.close()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000))
