"""How the agent gets its tool exposure and the tool_search index.

The signatures are the contract the agent runtime and the GUI call: ``make_exposer`` once per settings
change, ``make_tool_index`` once per registry (the result is injected as the ``tool_index`` bridge).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Collection
from typing import Literal

from weclaw_desktop.intent.api import Exposer
from weclaw_desktop.intent.engine import IntentEngine
from weclaw_desktop.intent.exposure import AllExposer, ProgressiveExposer
from weclaw_desktop.intent.index import ToolIndex
from weclaw_desktop.toolkit.registry import ToolRegistry

# One engine per registry (its manifest does not change), shared by the exposer and the tool index, and
# kept when the exposer is rebuilt after a settings change.
_engines: weakref.WeakKeyDictionary[ToolRegistry, IntentEngine] = weakref.WeakKeyDictionary()


def engine_for(registry: ToolRegistry) -> IntentEngine:
    engine = _engines.get(registry)
    if engine is None or engine.manifest is not registry.manifest:
        engine = _engines[registry] = IntentEngine(registry.manifest)
    return engine


def make_exposer(registry: ToolRegistry, mode: Literal["progressive", "all"] = "progressive") -> Exposer:
    """Mode "progressive": routed tools per round (intent engine); "all": every visible tool. Either way
    the exposure computation (``toolkit/exposure.py``) caps the round at ``exposure.max_functions``."""
    if mode == "all":
        return AllExposer(registry)
    return ProgressiveExposer(registry, engine_for(registry))


def make_tool_index(registry: ToolRegistry, visible: Callable[[], Collection[str]] | None = None) -> ToolIndex:
    """The object injected as the ``tool_index`` bridge; the tool_search tool calls its ``find``.

    ``visible`` gives the tools that may be offered right now: pass the exposure computation's
    (``lambda: planner.compute().visible``) so tool_search never names a tool the next round cannot offer.
    """
    return ToolIndex(registry, engine_for(registry), visible=visible)
