"""The tool index behind ``tool_search``: find tools by describing a need.

It is injected as the ``tool_index`` bridge. The model calls ``tool_search`` when the offered tools do
not cover a need, in its own words ("set a reminder", "compress a folder") or the user's. So the index
has **its own similarity**, independent of the routing keywords (whose gaps are the reason the tool was
missing): BM25 over each tool's own text — name, display names, descriptions, action names, the
descriptions of its actions when the tool is loaded or dynamic (MCP servers: every server tool's
description), the keywords an MCP server was given, and the example requests, descriptions and keywords
of the intents that recommend it — with sub-word terms (single Chinese characters, the first letters of long English words)
so a typo or another form of a word still meets it.

The routing score (the query through the intent engine, read as a need whatever its sentence form) is a
second, weaker opinion, combined as a noisy OR; a tool named in the query ("use the archive tool") scores
highest. The index is rebuilt lazily after the registry changes (a dynamic tool added or removed).

A hit on a dynamic tool (an MCP server: many independent tools) also names the server functions that match
the query best (``ToolHit.matched``), so a function the 128-function cap left out can be asked for and
offered next round (``toolkit/exposure.py``, ``Routing.prefer``).
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from weclaw_desktop.i18n import has_chinese
from weclaw_desktop.intent.engine import IntentEngine
from weclaw_desktop.intent.exposure import always_on
from weclaw_desktop.intent.similarity import BM25Index, subword_terms
from weclaw_desktop.intent.text import keyword_units, normalise, prepare
from weclaw_desktop.toolkit.registry import ToolRegistry

MIN_SCORE = 0.12
MATCHED_FUNCTIONS = 5  # per dynamic tool hit
ALTERNATIVE_FACTOR = 0.8
ROUTING_FACTOR = 0.6  # the engine's opinion counts, but less than the index's own similarity


@dataclass(frozen=True)
class ToolHit:
    name: str
    description: str
    score: float
    functions: tuple[str, ...]
    matched: tuple[str, ...] = ()  # a dynamic tool's functions that match the query best, best first


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
        index = BM25Index(k=3.0, term_fn=subword_terms)
        skip = set(always_on(self.registry))
        tools = [t for t in self.registry.tool_names() if t not in skip]
        for tool in tools:
            index.add(tool, (u for t in self.texts_of(tool) for u in keyword_units(t)))
        index.finish()
        self._tools = tools
        return index

    def texts_of(self, tool: str) -> list[str]:
        """The text a tool is found by (see the module docstring)."""
        spec = self.registry.spec(tool)
        texts = [
            tool.replace("_", " "),
            spec.display.name.en,
            spec.display.name.zh or "",
            spec.description.en,
            spec.description.zh or "",
            *(a.replace("_", " ") for a in spec.actions),
        ]
        keywords = spec.config.get("keywords")
        if isinstance(keywords, list):  # an MCP server's routing keywords
            texts += [k for k in keywords if isinstance(k, str)]
        if self.registry.is_dynamic(tool) or self.registry.is_loaded(tool):
            # a tool that cannot describe its actions is still found by its spec
            with contextlib.suppress(Exception):
                texts += [a.description for a in self.registry.get(tool).get_actions()]
        for intent in self.registry.manifest.intents.values():
            if tool in intent.recommended:
                texts += intent.examples.all()
                texts.append(intent.description)
                texts += intent.action_phrases.all() + intent.topics.all()
        return [t.replace("*", " ") for t in texts if t]

    def find(self, query: str, limit: int | None = None) -> list[ToolHit]:
        """The best matching enabled tools for ``query``, best first (at most ``limit``)."""
        limit = limit or self.registry.manifest.exposure.search_results
        with self._lock:
            if self._index is None:
                self._index = self._build()
            index, tools = self._index, list(self._tools)
        scores = self.similarity(query, index, tools)
        for tool, r in self.routing(query, tools).items():
            scores[tool] = 1 - (1 - scores[tool]) * (1 - ROUTING_FACTOR * r)
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
        return [self._hit(t, scores[t], lang, query) for t in best]

    def functions_for(self, tool: str, query: str, limit: int = MATCHED_FUNCTIONS) -> tuple[str, ...]:
        """A dynamic tool's functions whose names and descriptions match ``query`` best (best first)."""
        if not self.registry.is_dynamic(tool):
            return ()
        try:
            actions = self.registry.get(tool).get_actions()
        except Exception:  # a tool that cannot describe its actions: no function-level answer
            return ()
        by_action = {
            ref.action: ref.function for f in self.registry.functions_of(tool) if (ref := self.registry.resolve(f))
        }
        index = BM25Index(k=3.0, term_fn=subword_terms)
        for a in actions:
            if a.name in by_action:
                texts = (a.name.replace("_", " "), a.description or "")
                index.add(by_action[a.name], (u for t in texts for u in keyword_units(t)))
        index.finish()
        ranked = sorted(index.scores(prepare(query).units).items(), key=lambda kv: -kv[1])
        return tuple(f for f, score in ranked[:limit] if score >= MIN_SCORE)

    def similarity(
        self, query: str, index: BM25Index | None = None, tools: list[str] | None = None
    ) -> dict[str, float]:
        """Tool -> the index's own similarity to ``query`` (no routing keywords involved)."""
        if index is None or tools is None:
            with self._lock:
                if self._index is None:
                    self._index = self._build()
                index, tools = self._index, list(self._tools)
        scores = dict.fromkeys(tools, 0.0)
        for tool, sim in index.scores(prepare(query).units).items():
            if tool in scores:
                scores[tool] = sim
        return scores

    def routing(self, query: str, tools: Collection[str]) -> dict[str, float]:
        """Tool -> the intent engine's opinion of ``query``, read as a need whatever its sentence form ("how
        to zip a folder" asks for a zip tool): keyword evidence, or similarity; recommended tools get it,
        alternatives a little less."""
        out: dict[str, float] = {}
        ranked, _ = self.engine.score(query)
        w = self.engine.similarity_weight
        for s in ranked:
            score = max(s.score, s.keyword, w * s.similarity)
            intent = self.registry.manifest.intents[s.name]
            for tool in intent.recommended:
                if tool in tools:
                    out[tool] = max(out.get(tool, 0.0), score)
            for tool in intent.alternative:
                if tool in tools:
                    out[tool] = max(out.get(tool, 0.0), score * ALTERNATIVE_FACTOR)
        return out

    def _hit(self, tool: str, score: float, lang: str, query: str = "") -> ToolHit:
        spec = self.registry.spec(tool)
        return ToolHit(
            name=tool,
            description=spec.description.get(lang),
            score=round(score, 3),
            functions=tuple(self.registry.functions_of(tool)),
            matched=self.functions_for(tool, query) if query else (),
        )
