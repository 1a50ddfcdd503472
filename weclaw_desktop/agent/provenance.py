"""The provenance of a conversation, for the approval rule (#13): what the model sees that others wrote.

At the start of a turn (:func:`turn_provenance`):

- every tool result in the history the model is sent is judged again by tools.json's declarations
  (:meth:`SafetyModel.trust` on the call's function and arguments), so an earlier turn's web page keeps
  the chat tainted as long as the model still sees it, and a result trimmed out of the context no longer
  counts;
- text the user pasted into a message (the GUI's composer tells) is recorded in ``untrusted_inputs``
  (migration component ``safety.provenance``) and counts for the rest of the chat;
- the user's own messages are what "written by the user in this chat" means for URLs and addresses.

During the turn the loop adds each untrusted result (:func:`note_outcome`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from weclaw_desktop.storage.db import Database, Migration, register_migrations
from weclaw_desktop.toolkit.effects import SafetyModel
from weclaw_desktop.toolkit.jsonargs import ArgumentsError, parse_arguments
from weclaw_desktop.toolkit.manifest import LocalizedText, Trust
from weclaw_desktop.toolkit.outcome import CallOutcome
from weclaw_desktop.toolkit.provenance import Provenance, UntrustedSource

COMPONENT = "safety.provenance"
register_migrations(
    COMPONENT,
    [
        Migration(
            1,
            """
            CREATE TABLE untrusted_inputs (
                id INTEGER PRIMARY KEY,
                session_id TEXT NOT NULL,
                run_id TEXT NOT NULL,
                kind TEXT NOT NULL,
                detail TEXT NOT NULL DEFAULT '',
                created_at REAL NOT NULL
            );
            CREATE INDEX untrusted_inputs_session ON untrusted_inputs(session_id);
            """,
        )
    ],
)

PASTE_KEY = 200  # the start of a pasted message, stored to recognise it in later turns
PASTED = LocalizedText(en="has text you pasted", zh="含有你粘贴的文字")
_KINDS = {"pasted": PASTED}


class ProvenanceStore:
    """Untrusted input that the history alone does not show (pasted text), per session."""

    def __init__(self, db: Database) -> None:
        self.db = db
        db.ensure(COMPONENT)

    async def record(self, session_id: str, run_id: str, kind: str, detail: str = "") -> None:
        await self.db.run(
            self.db.execute,
            "INSERT INTO untrusted_inputs (session_id, run_id, kind, detail, created_at) VALUES (?, ?, ?, ?, ?)",
            (session_id, run_id, kind, detail, time.time()),
        )

    async def sources(self, session_id: str) -> list[UntrustedSource]:
        rows = await self.db.run(
            self.db.query, "SELECT kind, detail FROM untrusted_inputs WHERE session_id=? ORDER BY id", (session_id,)
        )
        return [
            UntrustedSource(function="", label=_KINDS.get(r["kind"], PASTED), detail=r["detail"], earlier=True)
            for r in rows
        ]


def from_history(messages: Iterable[Mapping[str, Any]], safety: SafetyModel) -> list[UntrustedSource]:
    """The untrusted results in the messages the model is sent (judged by the current declarations)."""
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    found: list[UntrustedSource] = []
    for m in messages:
        if m.get("role") == "assistant":
            for c in m.get("tool_calls") or []:
                fn = c.get("function") or {}
                calls[str(c.get("id"))] = (str(fn.get("name", "")), arguments_of(fn.get("arguments")))
        elif m.get("role") == "tool":
            name, args = calls.get(str(m.get("tool_call_id")), ("", {}))
            ref = safety.registry.resolve(name)
            if ref is None:
                continue
            if safety.trust(ref.tool, ref.action, args) is Trust.UNTRUSTED:
                source = safety.source(ref.tool, ref.action, name, args)
                found.append(UntrustedSource(source.function, source.tool, source.label, source.detail, earlier=True))
    return found


def user_texts(messages: Iterable[Mapping[str, Any]]) -> list[str]:
    return [str(m.get("content") or "") for m in messages if m.get("role") == "user"]


async def turn_provenance(
    messages: list[dict[str, Any]],
    safety: SafetyModel,
    store: ProvenanceStore | None,
    session_id: str,
    run_id: str,
    *,
    pasted: bool,
    text: str,
) -> Provenance:
    """The provenance a turn starts with (see the module docstring). A message with pasted text is not
    "written by the user": a URL in it does not count as one the user chose."""
    if pasted and store is not None:
        await store.record(session_id, run_id, "pasted", text[:PASTE_KEY])
    earlier = await store.sources(session_id) if store is not None else []
    if pasted and store is None:
        earlier.append(UntrustedSource(function="", label=PASTED, detail=text[:PASTE_KEY]))
    pasted_keys = {s.detail for s in earlier}
    texts = user_texts(messages)
    if text and text not in texts:
        texts.append(text)
    prov = Provenance(user_text=[t for t in texts if t[:PASTE_KEY] not in pasted_keys])
    for source in [*from_history(messages, safety), *earlier]:
        prov.add(source)
    return prov


def note_outcome(prov: Provenance, outcome: CallOutcome, arguments: Mapping[str, Any], safety: SafetyModel) -> bool:
    """Add the call's result to the provenance when it is untrusted (the tool ran); True if it was."""
    if not outcome.ran or not outcome.tool:
        return False
    if safety.trust(outcome.tool, outcome.action, arguments) is not Trust.UNTRUSTED:
        return False
    prov.add(safety.source(outcome.tool, outcome.action, outcome.function, arguments))
    return True


def arguments_of(raw: Any) -> dict[str, Any]:
    """A call's arguments (JSON text or a dict) as a dict; {} when they are not an object (or too deep or
    too long: the same limits as the dispatcher's, so odd arguments cannot break the turn here)."""
    if isinstance(raw, dict):
        return raw
    try:
        return parse_arguments(raw if isinstance(raw, str) else None)
    except (ArgumentsError, RecursionError, TypeError, ValueError):
        return {}
