"""The tool index behind ``tool_search``: find tools by describing a need.

It is injected as the ``tool_index`` bridge. A query is scored two ways:

- routing: the query goes through the intent engine; an intent's recommended tools get its score, its
  alternatives a little less;
- similarity: BM25 over each tool's own text (name, display names, description, action names, and the
  keywords of the intents that recommend it). This also covers tools that no intent knows, such as MCP
  tools registered at run time.

A tool named in the query ("use the archive tool") scores highest. The index is rebuilt lazily after the
registry changes (a dynamic tool added or removed). The two scores combine as a noisy OR.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from weclaw_desktop.i18n import has_chinese
from weclaw_desktop.intent.engine import IntentEngine
from weclaw_desktop.intent.exposure import always_on
from weclaw_desktop.intent.similarity import BM25Index
from weclaw_desktop.intent.text import keyword_units, normalise, prepare
from weclaw_desktop.toolkit.registry import ToolRegistry

MIN_SCORE = 0.12
ALTERNATIVE_FACTOR = 0.8


@dataclass(frozen=True)
class ToolHit:
    name: str
    description: str
    score: float
    functions: tuple[str, ...]


@runtime_checkable
class ToolIndexBridge(Protocol):
    """What the ``tool_search`` tool needs from the ``tool_index`` bridge."""

    def find(self, query: str, limit: int | None = None) -> list[ToolHit]: ...


class ToolIndex:
    """``visible``, when given, names the tools that may be offered right now (the exposure computation's
    ``visible``, see ``intent.factory.make_tool_index``); hits outside it are left out, so tool_search never
    promises a tool the next round cannot expose. Without it, every enabled tool counts."""

    def __init__(
        self,
        registry: ToolRegistry,
        engine: IntentEngine | None = None,
        *,
        visible: Callable[[], Collection[str]] | None = None,
    ) -> None:
        self.registry = registry
        self.engine = engine or IntentEngine(registry.manifest)
        self.visible = visible
        self._lock = threading.Lock()
        self._index: BM25Index | None = None
        self._tools: list[str] = []
        registry.add_listener(self._invalidate)

    def _invalidate(self) -> None:
        self._index = None

    def _build(self) -> BM25Index:
        index = BM25Index(k=3.0)
        skip = set(always_on(self.registry))
        tools = [t for t in self.registry.tool_names() if t not in skip]
        for tool in tools:
            spec = self.registry.spec(tool)
            texts = [
                tool.replace("_", " "),
                spec.display.name.en,
                spec.display.name.zh,
                spec.description.en,
                spec.description.zh,
                *(a.replace("_", " ") for a in spec.actions),
            ]
            for intent in self.registry.manifest.intents.values():
                if tool in intent.recommended:
                    texts += intent.keywords.all()
            index.add(tool, (u for t in texts if t for u in keyword_units(t)))
        index.finish()
        self._tools = tools
        return index

    def find(self, query: str, limit: int | None = None) -> list[ToolHit]:
        """The best matching enabled tools for ``query``, best first (at most ``limit``)."""
        limit = limit or self.registry.manifest.exposure.search_results
        with self._lock:
            if self._index is None:
                self._index = self._build()
            index, tools = self._index, list(self._tools)
        scores: dict[str, float] = dict.fromkeys(tools, 0.0)
        ranked, _ = self.engine.score(query)
        for s in ranked:
            intent = self.registry.manifest.intents[s.name]
            for tool in intent.recommended:
                if tool in scores:
                    scores[tool] = max(scores[tool], s.score)
            for tool in intent.alternative:
                if tool in scores:
                    scores[tool] = max(scores[tool], s.score * ALTERNATIVE_FACTOR)
        for tool, sim in index.scores(prepare(query).units).items():
            scores[tool] = 1 - (1 - scores[tool]) * (1 - sim)
        text = normalise(query)
        for tool in tools:
            # "chat_history", "the web tool": named outright (a bare "file" or "open" is just a word)
            if re.search(rf"\b{re.escape(tool)}(?:\s*tool\b|\s*工具)", text) or (
                "_" in tool and re.search(rf"\b{re.escape(tool)}\b", text)
            ):
                scores[tool] = 1.0
        allowed = self.visible() if self.visible is not None else None
        candidates = [t for t in tools if scores[t] >= MIN_SCORE and (allowed is None or t in allowed)]
        best = sorted(candidates, key=lambda t: -scores[t])[:limit]
        lang = "zh" if has_chinese(text) else "en"
        return [self._hit(t, scores[t], lang) for t in best]

    def _hit(self, tool: str, score: float, lang: str) -> ToolHit:
        spec = self.registry.spec(tool)
        return ToolHit(
            name=tool,
            description=spec.description.get(lang),
            score=round(score, 3),
            functions=tuple(self.registry.functions_of(tool)),
        )
