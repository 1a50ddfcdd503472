"""What an MCP tool's annotations mean here: its risk (and so whether a call asks) and its effects.

The rule is data (:data:`HINTS`), read in order; a tool gets the strictest risk any matching hint gives:

==================  =======  ==================================================================
hint                risk     effect / note
==================  =======  ==================================================================
destructiveHint     high     asks even on a trusted server (a ``git_reset``, a file overwrite)
readOnlyHint        low      runs without asking on a trusted server
openWorldHint       (none)   ``sends-data-out``: it reaches outside (the web, someone else's API)
==================  =======  ==================================================================

A tool of a server the user has not marked trusted is always high risk: its annotations are the
server's own word. A trusted server's tool without hints is medium (no prompt at the desktop, a prompt
from the phone). Only hints the server *sets* count: the MCP spec's pessimistic defaults
(``destructiveHint`` true unless said otherwise) would make "trusted" mean nothing.

The per-tool approval mode of the server's settings (``ask`` / ``allow`` / ``deny``) overrides the hints:
``ask`` is high risk, ``allow`` low, ``deny`` switches the tool off (see ``tool.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import mcp_types as types

from weclaw_desktop.toolkit.base import Risk

#: The effect names of the safety model (toolkit manifest ``Effect`` values).
SENDS_DATA_OUT = "sends-data-out"


@dataclass(frozen=True)
class Hint:
    field: str  # attribute of mcp_types.ToolAnnotations
    risk: Risk | None  # the risk it gives on a trusted server
    effects: tuple[str, ...] = ()
    label: str = ""  # said in the function description the model reads


HINTS: tuple[Hint, ...] = (
    Hint("destructive_hint", Risk.HIGH, label="destructive: asks the user first"),
    Hint("read_only_hint", Risk.LOW, label="read-only"),
    Hint("open_world_hint", None, effects=(SENDS_DATA_OUT,), label="reaches outside this computer"),
)

#: Approval modes a user can set per server tool, as risks (``deny`` hides the tool instead).
MODE_RISK: dict[str, Risk] = {"ask": Risk.HIGH, "allow": Risk.LOW}


@dataclass(frozen=True)
class Meaning:
    risk: Risk
    effects: tuple[str, ...]
    labels: tuple[str, ...]


def _set(tool: types.Tool) -> list[Hint]:
    notes = tool.annotations
    if notes is None:
        return []
    return [h for h in HINTS if getattr(notes, h.field, None) is True]


def meaning(tool: types.Tool, *, trusted: bool, mode: str | None = None) -> Meaning:
    """The risk, effects and description labels of ``tool`` on a server that is (not) ``trusted``."""
    hints = _set(tool)
    effects = tuple(e for h in hints for e in h.effects)
    labels = tuple(h.label for h in hints if h.label)
    if mode in MODE_RISK:
        return Meaning(MODE_RISK[mode], effects, labels)
    if not trusted:
        return Meaning(Risk.HIGH, effects, labels)
    risks = [h.risk for h in hints if h.risk is not None]
    risk = max(risks, key=lambda r: r.rank) if risks else Risk.MEDIUM
    return Meaning(risk, effects, labels)
