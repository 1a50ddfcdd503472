"""The stored messages of a session as the OpenAI chat messages a model accepts, repaired after a crash."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from weclaw_desktop.agent.provider.messages import META

INTERRUPTED_RESULT = "The call did not finish: the app stopped before it returned. Ask before retrying it."


@dataclass(frozen=True)
class StoredMessage:
    """A message as stored, for display (the GUI's transcript, ``weclaw chat`` resume)."""

    id: int
    role: str  # user | assistant | tool
    content: str
    run_id: str = ""
    round: int = 0
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    tool_call_id: str = ""
    status: str = "complete"  # complete | partial (stream cut) | cancelled
    created_at: float = 0.0
    reasoning: str = ""  # the model's thinking (assistant messages of reasoning models)
    meta: dict[str, Any] = field(default_factory=dict)  # reasoning field, opaque fields, source, reasoning_ms

    @property
    def reasoning_ms(self) -> int:
        return int(self.meta.get("reasoning_ms") or 0)


def build_model_messages(stored: list[StoredMessage], *, max_chars: int = 200_000) -> list[dict[str, Any]]:
    """OpenAI messages from stored rows.

    A tool call without a result (the process died mid-call, or the turn was stopped) gets a synthetic
    "did not finish" result; a tool message without its call is dropped; a partial assistant text
    (stream cut) is kept as text. Older messages are dropped first when over ``max_chars``, always
    restarting at a user message so no tool result loses its call.
    """
    out: list[dict[str, Any]] = []
    open_calls: list[str] = []
    answered: set[str] = set()

    def close_open() -> None:
        for cid in open_calls:
            if cid not in answered:
                out.append({"role": "tool", "tool_call_id": cid, "content": INTERRUPTED_RESULT})
        open_calls.clear()

    for m in stored:
        if m.role == "tool":
            if m.tool_call_id in open_calls and m.tool_call_id not in answered:
                answered.add(m.tool_call_id)
                out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
            continue
        close_open()
        if m.role == "user":
            out.append({"role": "user", "content": m.content})
        elif m.role == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": m.content or None}
            if m.reasoning or m.meta:  # the provider decides what of it goes back (agent/provider/messages.py)
                msg[META] = {**m.meta, "reasoning": m.reasoning} if m.reasoning else dict(m.meta)
            if m.tool_calls:
                msg["tool_calls"] = m.tool_calls
                open_calls.extend(c["id"] for c in m.tool_calls)
                answered = set()
            elif not m.content:
                continue
            out.append(msg)
    close_open()
    return _trim(out, max_chars)


def _size(m: dict[str, Any]) -> int:
    meta = m.get(META) or {}
    reasoning = len(str(meta.get("reasoning") or "")) + (len(json.dumps(meta["extras"])) if meta.get("extras") else 0)
    return len(str(m.get("content") or "")) + len(json.dumps(m.get("tool_calls") or "")) + reasoning


def _trim(messages: list[dict[str, Any]], max_chars: int) -> list[dict[str, Any]]:
    """Drop the oldest user turns (whole: a user message and everything up to the next one) until the rest fits.

    Messages are never shortened, so a kept tool-call turn keeps its reasoning and opaque fields, which DeepSeek-
    and Kimi-style endpoints require with it."""
    total = sum(_size(m) for m in messages)
    start = 0
    while total > max_chars and start < len(messages) - 1:
        total -= _size(messages[start])
        start += 1
        while start < len(messages) - 1 and messages[start]["role"] != "user":
            total -= _size(messages[start])
            start += 1
    return messages[start:]
