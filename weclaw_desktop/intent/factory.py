"""How the agent gets its tool exposure and the tool_search index.

The intent engineer replaces the bodies with the progressive exposer and the real index; the signatures
are the contract the agent runtime and the GUI call.
"""

from __future__ import annotations

from typing import Any, Literal

from weclaw_desktop.intent.api import AllVisible, Exposer
from weclaw_desktop.toolkit.registry import ToolRegistry


def make_exposer(registry: ToolRegistry, mode: Literal["progressive", "all"] = "progressive") -> Exposer:
    """The exposer for ``mode``. Until the intent engine lands both modes expose every visible tool."""
    return AllVisible()


def make_tool_index(registry: ToolRegistry) -> Any | None:
    """The object injected as the ``tool_index`` bridge (used by the tool_search tool); None until built."""
    return None
