"""Tokens and cost: what each model request used (from the endpoint, or estimated) and what it cost.

**Estimating** when the endpoint sends no usage (many local servers, some proxies): a character count with two
rates, the ones DeepSeek documents for its tokenizer: about 0.3 tokens per character of Latin-script text and
code, about 0.6 per Chinese/Japanese/Korean character; plus 4 tokens of framing per message and 765 per image (a
1024x1024 image at OpenAI's high detail). Byte-pair tokenizers of current models (GPT-4o's o200k, DeepSeek, Qwen,
GLM) land within about +-30 % of that on ordinary chat text; code and long numbers vary more. That is good enough
for what it is used for, an order of magnitude of a chat's size and cost, and every estimated figure is shown
with "≈". An exact count would need each model's tokenizer; the ones that exist as Python packages download
their vocabularies at run time (tiktoken), which the app must not do.

**Cost** = prompt tokens x input price + completion tokens x output price, per million, with the user's price
for that model (Settings) or else a published one (``resources/prices.toml``); shown only when every request
of what is summed has a known price.
"""

from __future__ import annotations

import json
import re
import time
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from weclaw_desktop.paths import resource_path
from weclaw_desktop.storage.db import Database

LATIN_RATE = 0.3
CJK_RATE = 0.6
MESSAGE_OVERHEAD = 4
IMAGE_TOKENS = 765
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")


def estimate_text(text: str) -> int:
    if not text:
        return 0
    if len(text) >= _CACHED_FROM:
        return _estimate_cached(text)
    return _estimate(text)


#: Texts this long have their estimate remembered: a turn estimates the whole conversation each round when the
#: endpoint reports no usage, and a 300-turn chat made that ~18 ms per turn on the UI loop, growing with it.
_CACHED_FROM = 200


@lru_cache(maxsize=8192)
def _estimate_cached(text: str) -> int:
    return _estimate(text)


def _estimate(text: str) -> int:
    cjk = len(_CJK.findall(text))
    return max(1, round(cjk * CJK_RATE + (len(text) - cjk) * LATIN_RATE))


def estimate_messages(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] = ()) -> int:
    """Prompt tokens of a request: every message's text, tool calls and images, and the tool schemas."""
    total = 0
    for msg in messages:
        total += MESSAGE_OVERHEAD
        content = msg.get("content")
        if isinstance(content, str):
            total += estimate_text(content)
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and part.get("type") == "text":
                    total += estimate_text(str(part.get("text") or ""))
                elif isinstance(part, dict) and part.get("type") == "image_url":
                    total += IMAGE_TOKENS
        if msg.get("tool_calls"):
            total += estimate_text(json.dumps(msg["tool_calls"], ensure_ascii=False))
    if tools:
        total += estimate_text(json.dumps(list(tools), ensure_ascii=False))
    return total


@dataclass(frozen=True)
class Price:
    input_per_m: float
    output_per_m: float
    currency: str = "USD"

    def cost(self, prompt: int, completion: int) -> float:
        return (prompt * self.input_per_m + completion * self.output_per_m) / 1_000_000


@cache
def published_prices() -> dict[str, dict[str, Price]]:
    """preset -> model -> Price from resources/prices.toml ({} when the file is missing or broken)."""
    try:
        data = tomllib.loads(resource_path("prices.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    out: dict[str, dict[str, Price]] = {}
    for preset, block in data.items():
        if not isinstance(block, dict):
            continue
        currency = str(block.get("currency") or "USD")
        for model, pair in block.items():
            if isinstance(pair, list) and len(pair) == 2 and all(isinstance(v, int | float) for v in pair):
                out.setdefault(preset, {})[model] = Price(float(pair[0]), float(pair[1]), currency)
    return out


def price_for(entry: Any, model: str) -> Price | None:
    """The price of ``model`` at provider configuration ``entry``: the user's, else the preset's published one."""
    own = getattr(entry, "prices", {}).get(model)
    if own is not None:
        return Price(own.input_per_m, own.output_per_m, own.currency)
    return published_prices().get(getattr(entry, "preset", "") or "", {}).get(model)


@dataclass(frozen=True)
class UsageRow:
    run_id: str
    round: int
    provider: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    estimated: bool

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class UsageSum:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False  # some of it was estimated
    cost: dict[str, float] | None = None  # currency -> amount; None when a price is unknown

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def summarize(rows: Iterable[UsageRow], price: Any = None) -> UsageSum:
    """Totals of ``rows``; ``price(row) -> Price | None`` gives the cost (None for any unknown price)."""
    prompt = completion = 0
    estimated = False
    cost: dict[str, float] | None = {} if price is not None else None
    n = 0
    for row in rows:
        n += 1
        prompt += row.prompt_tokens
        completion += row.completion_tokens
        estimated = estimated or row.estimated
        if cost is not None:
            p = price(row)
            if p is None:
                cost = None
            else:
                cost[p.currency] = cost.get(p.currency, 0.0) + p.cost(row.prompt_tokens, row.completion_tokens)
    return UsageSum(prompt, completion, estimated, cost if n else None)


def format_tokens(n: int, estimated: bool = False) -> str:
    text = f"{n / 1000:.1f}k" if n >= 10_000 else f"{n:,}"
    return f"≈{text}" if estimated else text


def format_cost(cost: Mapping[str, float] | None) -> str:
    """ "$0.0123" / "¥0.08" / "0.02 EUR"; '' when unknown."""
    if not cost:
        return ""
    symbols = {"USD": "$", "CNY": "¥"}
    parts = []
    for currency, amount in sorted(cost.items()):
        digits = 4 if amount < 0.1 else 2
        sym = symbols.get(currency)
        parts.append(f"{sym}{amount:.{digits}f}" if sym else f"{amount:.{digits}f} {currency}")
    return " + ".join(parts)


class UsageRows:
    """The ``usage`` table of ``history.conversation``: one row per model request."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(
        self,
        session_id: str,
        run_id: str,
        round_no: int,
        *,
        provider: str,
        model: str,
        prompt_tokens: int,
        completion_tokens: int,
        estimated: bool,
    ) -> None:
        await self.db.run(
            self.db.execute,
            "INSERT INTO usage(session_id, run_id, round, provider, model, prompt_tokens, completion_tokens, "
            "estimated, created_at) VALUES(?,?,?,?,?,?,?,?,?)",
            (
                session_id,
                run_id,
                round_no,
                provider,
                model,
                prompt_tokens,
                completion_tokens,
                int(estimated),
                time.time(),
            ),
        )

    def rows_sync(self, session_id: str) -> list[UsageRow]:
        rows = self.db.query(
            "SELECT run_id, round, provider, model, prompt_tokens, completion_tokens, estimated FROM usage "
            "WHERE session_id=? ORDER BY id",
            (session_id,),
        )
        return [
            UsageRow(
                r["run_id"],
                r["round"],
                r["provider"],
                r["model"],
                r["prompt_tokens"],
                r["completion_tokens"],
                bool(r["estimated"]),
            )
            for r in rows
        ]

    async def rows(self, session_id: str) -> list[UsageRow]:
        return await self.db.run(self.rows_sync, session_id)
