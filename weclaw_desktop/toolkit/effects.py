"""What one call does, from tools.json's ``safety`` declarations: its effects, and the trust of its result.

:class:`SafetyModel` reads the declarations (``ToolSpec.safety``, the manifest's ``safety`` rules) and
answers, for a call with its arguments:

- :meth:`effects`: the effects that hold for these arguments (an append to ``~/.bashrc`` persists; one to
  ``~/notes.txt`` does not; ``web_fetch`` of a URL the user wrote in this chat is not egress, one the model
  built is);
- :meth:`trust`: whether the result may carry someone else's instructions (a web page, an MCP server not
  marked trusted, a file from the phone's incoming folder, the clipboard);
- :meth:`gated`: which effects need the user's OK now, given the turn's :class:`Provenance`.

Dynamic tools (MCP) carry their declaration on the :class:`ToolSpec` they register, so nothing here is
special for them. Nothing is imported from the tools themselves.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from weclaw_desktop.toolkit.manifest import ActionSafety, Effect, EffectDecl, LocalizedText, SafetyRules, Trust
from weclaw_desktop.toolkit.pathclass import PathClassifier, Places
from weclaw_desktop.toolkit.provenance import Provenance, UntrustedSource
from weclaw_desktop.toolkit.registry import ToolRegistry
from weclaw_desktop.toolkit.summary import FIELD, render

#: Looks up what a summary fact means now (e.g. "device": the phone's name for an id, or the phone used
#: most recently for ''). Set by the composition root; a fact without a resolver shows the argument.
AsyncResolver = Callable[[str], Awaitable[str]]

_NOTHING = ActionSafety()


@dataclass(frozen=True)
class EffectHit:
    """An effect that holds for one call, and what makes it hold."""

    effect: Effect
    detail: str = ""  # the path or URL (empty: the action always has this effect)
    path_class: str = ""  # the class the path is in ("persistence", "credentials")


class SafetyModel:
    """The declarations of a registry, evaluated. ``places`` are the app's folders ({data}, {incoming}...)."""

    def __init__(self, registry: ToolRegistry, places: Places | None = None) -> None:
        self.registry = registry
        self.rules: SafetyRules = registry.manifest.safety
        self.classifier = PathClassifier(self.rules.paths, places)
        self.resolvers: dict[str, AsyncResolver] = {}

    def set_places(self, places: Places) -> None:
        self.classifier = PathClassifier(self.rules.paths, places)

    def declaration(self, tool: str, action: str) -> ActionSafety:
        if not self.registry.has_tool(tool) and tool not in self.registry.tool_names(include_disabled=True):
            return _NOTHING
        safety = self.registry.spec(tool).safety
        return safety.of(action) if safety is not None else _NOTHING

    # --- one call ----------------------------------------------------------------------------------
    def path_values(
        self, decl: ActionSafety, arguments: Mapping[str, Any], names: Iterable[str] | None = None
    ) -> list[str]:
        """The paths named by ``names`` (default: the action's ``paths``) in the call's arguments."""
        return _strings(arguments, names if names is not None else (decl.paths or []))

    def effects(
        self,
        tool: str,
        action: str,
        arguments: Mapping[str, Any],
        provenance: Provenance | None = None,
        *,
        base: Path | None = None,
    ) -> list[EffectHit]:
        """The effects that hold for this call (see the module docstring)."""
        decl = self.declaration(tool, action)
        hits: list[EffectHit] = []
        for item in decl.effects or []:
            hit = self._holds(item, decl, arguments, provenance, base)
            if hit is not None and hit not in hits:
                hits.append(hit)
        return hits

    def _holds(
        self,
        item: EffectDecl,
        decl: ActionSafety,
        arguments: Mapping[str, Any],
        provenance: Provenance | None,
        base: Path | None,
    ) -> EffectHit | None:
        if item.paths_in:
            found = self.classifier.first_in(self.path_values(decl, arguments, item.args or None), item.paths_in, base)
            return EffectHit(item.effect, found[0], found[1]) if found else None
        if item.urls:
            users = provenance or Provenance()
            for value in _strings(arguments, item.urls):
                if not users.user_wrote(value):
                    return EffectHit(item.effect, value)
            return None
        return EffectHit(item.effect)

    def trust(self, tool: str, action: str, arguments: Mapping[str, Any], *, base: Path | None = None) -> Trust:
        decl = self.declaration(tool, action)
        if decl.results is Trust.UNTRUSTED:
            return Trust.UNTRUSTED
        if decl.untrusted_in and self.classifier.first_in(self.path_values(decl, arguments), decl.untrusted_in, base):
            return Trust.UNTRUSTED
        return Trust.TRUSTED

    def source(self, tool: str, action: str, function: str, arguments: Mapping[str, Any]) -> UntrustedSource:
        """The provenance entry for an untrusted result of this call."""
        decl = self.declaration(tool, action)
        detail = next(iter(_strings(arguments, [*(decl.paths or []), "url", "query"])), "")
        label = decl.source or LocalizedText(en=f"used {function}", zh=f"调用了 {function}")
        return UntrustedSource(function=function, tool=tool, label=label, detail=detail[:200])

    def gated(self, hits: Iterable[EffectHit], provenance: Provenance | None) -> list[EffectHit]:
        """The effects that need the user's OK because untrusted content is in the conversation."""
        if provenance is None or not provenance.tainted:
            return []
        wanted = set(self.rules.after_untrusted)
        return [h for h in hits if h.effect in wanted]

    async def describe(self, tool: str, action: str, arguments: Mapping[str, Any]) -> LocalizedText:
        """What the call will do, in plain words, in both languages ("send report.pdf to Pixel 7")."""
        decl = self.declaration(tool, action)
        spec = self.registry.spec(tool) if tool in self.registry.tool_names(include_disabled=True) else None
        name = spec.display.name if spec is not None else LocalizedText(en=tool, zh=tool)
        known: dict[str, str] = {}
        if decl.summary is not None:
            for fact, arg in {
                (f.group(1), f.group(2)) for t in (decl.summary.en, decl.summary.zh) for f in FIELD.finditer(t)
            }:
                resolver = self.resolvers.get(fact)
                if resolver is not None:
                    value = arguments.get(arg)
                    try:
                        known[str(value or "")] = await resolver(str(value or ""))
                    except Exception:  # a summary never fails the call
                        known[str(value or "")] = str(value or "")

        def both() -> LocalizedText:
            resolvers: dict[str, Callable[[str], str]] = {"device": lambda v: known.get(v, v)} if known else {}
            texts = {
                lang: render(
                    decl.summary,
                    arguments,
                    commands=self.rules.commands,
                    fallback=f"{name.get(lang)} → {action}",
                    resolvers=resolvers,
                    lang=lang,
                )
                for lang in ("en", "zh")
            }
            return LocalizedText(en=texts["en"], zh=texts["zh"])

        return await asyncio.to_thread(both)


def declared_effects(registry: ToolRegistry, tool: str) -> tuple[set[Effect], Trust]:
    """For the tool panel: every effect any action of ``tool`` may have, and whether its results can be
    untrusted (some action's results are, or are when they come from a path class such as "incoming")."""
    effects: set[Effect] = set()
    trust = Trust.TRUSTED
    spec = registry.spec(tool)
    if spec.safety is None:
        return effects, trust
    for action in spec.actions:
        decl = spec.safety.of(action)
        effects |= {e.effect for e in decl.effects or []}
        if decl.results is Trust.UNTRUSTED or decl.untrusted_in:
            trust = Trust.UNTRUSTED
    return effects, trust


def _strings(arguments: Mapping[str, Any], names: Iterable[str]) -> list[str]:
    """The string values (a string, or each string of a list) of the named arguments."""
    out: list[str] = []
    for name in names:
        value = arguments.get(name)
        if isinstance(value, str) and value.strip():
            out.append(value)
        elif isinstance(value, list):
            out.extend(v for v in value if isinstance(v, str) and v.strip())
    return out
