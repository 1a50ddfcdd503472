"""First-round routing for dynamic tools (MCP servers): their keywords, names and tool descriptions.

The intent engine routes by tools.json's intents, which know nothing about the servers a user added. So
without this, an MCP server is reached only through ``tool_search``. :class:`DynamicRoutes` looks at
the request once per turn and names the dynamic tools it asks for, with the evidence:

1. a **keyword** the user gave the server (``McpServerSettings.keywords``, in the tool spec's
   ``config["keywords"]``), matched like the intents' keywords (units, word boundaries, ``*`` gaps);
2. the **server named** as such: "my git server", "the git MCP", "用 git 服务器";
3. a **server tool named**: a tool name of two words or more, written as is or with spaces ("git_log",
   "git log");
4. a **description**, only to fill a gap: when the engine routes no built-in tool and the request is not
   a question the model answers itself, a request close (BM25 over the words of each server tool's name
   and description, the tool_search index's similarity) to one server tool's description, at least
   :data:`DESCRIPTION_MIN` and :data:`DESCRIPTION_MARGIN` ahead of every other server. (Measured on
   hand-written requests: descriptions alone score a wrong server as high as the right one when a
   built-in tool is the answer, "list the files in my downloads folder"; so they never compete with it.)

Built-in tools are never touched (their routing, and its figures, stay the engine's); the tools found
here are offered next to the routed ones without counting against ``max_tools_per_request`` (the
function cap still applies). The table is rebuilt lazily after the registry changes.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass

from weclaw_desktop.intent.matcher import KeywordMatcher
from weclaw_desktop.intent.similarity import BM25Index, subword_terms
from weclaw_desktop.intent.text import keyword_units, normalise, prepare
from weclaw_desktop.toolkit.registry import ToolRegistry

#: How the server's name is written when the user means the server.
SERVER_CUES_AFTER = ("server", "mcp", "mcp server", "服务器", "服务", "服务端")
SERVER_CUES_BEFORE = ("mcp",)
DESCRIPTION_MIN = 0.55  # the description similarity (0..1) a request needs, without any name or keyword
DESCRIPTION_MARGIN = 0.1  # ahead of the best function of any other server
KEYWORD, NAMED, TOOL_NAMED = 0, 1, 2  # the kind of evidence, in the matcher's "intent" field


@dataclass(frozen=True)
class _Table:
    matcher: KeywordMatcher
    kinds: dict[str, tuple[int, str, str]]  # matcher intent key -> (kind, tool, phrase)
    index: BM25Index | None
    owner: dict[str, tuple[str, str]]  # index doc (function) -> (tool, server tool name)


class DynamicRoutes:
    """Which dynamic tools a request asks for (see the module docstring)."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        self._lock = threading.Lock()
        self._table: _Table | None = None
        registry.add_listener(self._invalidate)

    def _invalidate(self) -> None:
        self._table = None

    def match(self, text: str, *, descriptions: bool = True) -> dict[str, str]:
        """Dynamic tool -> why the request asks for it (empty when it names none). ``descriptions`` False:
        names and keywords only (the engine routed built-in tools, or found a question)."""
        table = self._get()
        if table is None:
            return {}
        prepared = prepare(text)
        out: dict[str, str] = {}
        for m in table.matcher.find(prepared.units):
            kind, tool, phrase = table.kinds[m.keyword.intent]
            if tool not in out:
                what = ("keyword", "named", "tool named")[kind]
                out[tool] = f"MCP {what} '{phrase}'"
        if descriptions and table.index is not None and prepared.units:
            scores = table.index.scores(prepared.units)
            best: dict[str, tuple[float, str]] = {}
            for fn, score in scores.items():
                tool, name = table.owner[fn]
                if score > best.get(tool, (0.0, ""))[0]:
                    best[tool] = (score, name)
            ranked = sorted(best.items(), key=lambda kv: -kv[1][0])
            if ranked:
                tool, (score, name) = ranked[0]
                runner_up = ranked[1][1][0] if len(ranked) > 1 else 0.0
                if score >= DESCRIPTION_MIN and score - runner_up >= DESCRIPTION_MARGIN and tool not in out:
                    out[tool] = f"MCP tool '{name}' matches the request ({score:.2f})"
        return out

    def _get(self) -> _Table | None:
        with self._lock:
            if self._table is None:
                self._table = self._build()
            return self._table

    def _build(self) -> _Table | None:
        registry = self.registry
        tools = [t for t in registry.tool_names() if registry.is_dynamic(t)]
        if not tools:
            return None
        matcher = KeywordMatcher()
        kinds: dict[str, tuple[int, str, str]] = {}
        index = BM25Index(k=3.0, term_fn=subword_terms)
        owner: dict[str, tuple[str, str]] = {}

        def add(kind: int, tool: str, phrase: str, weight: float = 1.0) -> None:
            if not any(keyword_units(phrase)):
                return
            key = f"{kind}:{tool}:{phrase}"
            kinds[key] = (kind, tool, phrase)
            matcher.add(key, phrase, weight)

        for tool in tools:
            config = registry.spec(tool).config
            keywords = config.get("keywords")
            for k in keywords if isinstance(keywords, list) else []:
                if isinstance(k, str) and k.strip():
                    add(KEYWORD, tool, k.strip())
            server = config.get("server")
            if isinstance(server, str) and server:
                name = normalise(server.replace("_", " ").replace("-", " "))
                for cue in SERVER_CUES_AFTER:
                    add(NAMED, tool, f"{name} {cue}")
                for cue in SERVER_CUES_BEFORE:
                    add(NAMED, tool, f"{cue} {name}")
            instance = None
            with contextlib.suppress(Exception):  # a tool that cannot describe its actions: names only
                instance = registry.get(tool)
            originals = getattr(instance, "original_name", None)
            actions = instance.get_actions() if instance is not None else []
            functions = dict(zip((a.name for a in actions), registry.functions_of(tool), strict=False))
            for a in actions:
                original = originals(a.name) if callable(originals) else None
                name = str(original or a.name)
                words = name.replace("-", "_").strip("_").split("_")
                if len(words) >= 2 and all(words):
                    add(TOOL_NAMED, tool, " ".join(words))
                fn = functions.get(a.name)
                if fn is not None:
                    index.add(fn, (u for t in (" ".join(words), a.description or "") for u in keyword_units(t)))
                    owner[fn] = (tool, name)
        matcher.finish()
        index.finish()
        return _Table(matcher, kinds, index if owner else None, owner)
