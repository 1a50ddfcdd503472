"""Joins the chunks of a streamed chat completion into one assistant message, following the provider's profile.

Each chunk is the parsed JSON of one ``data:`` event. From the deltas of the first choice:

- ``content`` is the answer, with ``<think>`` blocks split off when the profile names think tags (``think.py``);
- the profile's reasoning fields (``reasoning_content``, ``reasoning``) carry thinking text; only the first one
  present in a delta is used, so servers that send both with the same text are not shown twice;
- structured reasoning blocks (``reasoning_details``) are merged by their ``index`` and kept verbatim;
- tool-call deltas are assembled by ``index`` (parallel calls included); fields of a call this code does not know
  (Gemini's ``extra_content`` thought signature) are kept as they came;
- other fields of the message the app does not know are kept too (last value wins, never concatenated: they are
  opaque tokens), so they can be returned when the profile says so.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from weclaw_desktop.agent.provider.profiles import Profile
from weclaw_desktop.agent.provider.think import ThinkParser

#: Delta fields with a meaning of their own (everything else of an assistant message is opaque).
KNOWN_DELTA_FIELDS = frozenset({"role", "content", "tool_calls", "function_call", "refusal", "audio", "name"})
KNOWN_CALL_FIELDS = frozenset({"index", "id", "type", "function"})


@dataclass
class AssembledCall:
    index: int
    id: str = ""
    name: str = ""
    arguments: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # opaque fields of the call, as the endpoint sent them

    def as_message(self) -> dict[str, Any]:
        msg: dict[str, Any] = {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }
        for key, value in self.extra.items():
            msg.setdefault(key, value)
        return msg


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


@dataclass
class Completion:
    text: str = ""
    tool_calls: list[AssembledCall] = field(default_factory=list)
    finish_reason: str = ""
    usage: Usage | None = None
    model: str = ""
    reasoning: str = ""
    reasoning_field: str = ""  # the field reasoning came in ("" = think tags or none)
    reasoning_ms: int = 0  # from the first reasoning delta to the first answer delta
    extras: dict[str, Any] = field(default_factory=dict)  # opaque message fields (reasoning_details, …)
    done: bool = False  # the stream ended with [DONE]
    source: str = ""  # which endpoint wrote it ("deepseek@api.deepseek.com"): opaque fields go back only there

    def meta(self) -> dict[str, Any]:
        """What the history keeps beside text and tool calls (see ``messages.py``)."""
        meta: dict[str, Any] = {}
        if self.reasoning:
            meta["reasoning"] = self.reasoning
            meta["reasoning_ms"] = self.reasoning_ms
        if self.reasoning_field:
            meta["reasoning_field"] = self.reasoning_field
        if self.extras:
            meta["extras"] = self.extras
        if meta or any(c.extra for c in self.tool_calls):
            meta["source"] = self.source
        return meta

    def message(self) -> dict[str, Any]:
        """The assistant message in the neutral form the loop keeps (``_meta`` is stripped before sending)."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            msg["tool_calls"] = [c.as_message() for c in self.tool_calls]
        meta = self.meta()
        if meta:
            msg["_meta"] = meta
        return msg


class CallAssembler:
    """Joins streamed tool-call deltas into whole calls, keyed by ``index``."""

    def __init__(self) -> None:
        self._slots: dict[int, AssembledCall] = {}

    def add(self, delta: dict[str, Any]) -> None:
        index = delta.get("index")
        call_id = delta.get("id") or ""
        if not isinstance(index, int):  # some servers omit index: match by id, else a new slot
            index = next((i for i, s in self._slots.items() if call_id and s.id == call_id), len(self._slots))
        slot = self._slots.get(index)
        if slot is None:
            slot = self._slots[index] = AssembledCall(index=index)
        if call_id and not slot.id:
            slot.id = str(call_id)
        fn = delta.get("function")
        if isinstance(fn, dict):
            name = fn.get("name") or ""
            if name and name != slot.name:
                slot.name = name if not slot.name else slot.name + name
            args = fn.get("arguments")
            if isinstance(args, str):
                slot.arguments += args
            elif isinstance(args, dict):  # a few servers send the arguments as an object
                slot.arguments += json.dumps(args, ensure_ascii=False)
        for key, value in delta.items():
            if key not in KNOWN_CALL_FIELDS and value is not None:
                slot.extra[key] = merge_opaque(slot.extra.get(key), value)

    def pending(self) -> int:
        return sum(1 for s in self._slots.values() if s.name or s.arguments)

    def calls(self) -> list[AssembledCall]:
        out = []
        for index in sorted(self._slots):
            slot = self._slots[index]
            if not slot.name and not slot.arguments:
                continue
            if not slot.id:
                slot.id = f"call_{index}_{uuid.uuid4().hex[:8]}"
            out.append(slot)
        return out


def merge_opaque(old: Any, new: Any) -> Any:
    """Opaque values across chunks: objects merge key by key, anything else is replaced by the newer value."""
    if isinstance(old, dict) and isinstance(new, dict):
        merged = dict(old)
        for key, value in new.items():
            if value is not None:
                merged[key] = merge_opaque(merged.get(key), value)
        return merged
    return new


def merge_details(blocks: list[dict[str, Any]], pieces: list[Any]) -> None:
    """Streamed reasoning_details: pieces with the same ``index`` are one block (text fields joined)."""
    for piece in pieces:
        if not isinstance(piece, dict):
            continue
        index = piece.get("index")
        target = next((b for b in blocks if index is not None and b.get("index") == index), None)
        if target is None:
            blocks.append({k: v for k, v in piece.items() if v is not None})
            continue
        for key, value in piece.items():
            if value is None:
                continue
            if key in ("text", "summary", "data") and isinstance(value, str) and isinstance(target.get(key), str):
                target[key] += value
            else:
                target[key] = value


def details_text(pieces: list[Any]) -> str:
    """Readable text of reasoning_details pieces (plain text and summaries; encrypted blocks have none)."""
    parts = []
    for piece in pieces:
        if isinstance(piece, dict):
            for key in ("text", "summary"):
                value = piece.get(key)
                if isinstance(value, str):
                    parts.append(value)
    return "".join(parts)


class StreamAssembler:
    """Feed parsed chunks; read :attr:`result`. Callbacks receive answer and reasoning deltas as they arrive."""

    def __init__(
        self,
        profile: Profile,
        *,
        on_text: Callable[[str], None] | None = None,
        on_reasoning: Callable[[str], None] | None = None,
        on_retract: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.profile = profile
        self.result = Completion()
        self.calls = CallAssembler()
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._details: list[dict[str, Any]] = []
        self._think = ThinkParser(profile.reasoning.think_tags)
        self._on_text = on_text
        self._on_reasoning = on_reasoning
        self._on_retract = on_retract
        self._clock = clock
        self._reason_start = 0.0
        self._reason_end = 0.0
        self._shown_from = ""  # "field" | "details"
        self.chunks = 0

    # --- what has arrived so far (for errors part-way) ----------------------------------------------
    @property
    def text(self) -> str:
        return "".join(self._text)

    @property
    def reasoning(self) -> str:
        return "".join(self._reasoning)

    # --- feeding -----------------------------------------------------------------------------------
    def add(self, chunk: dict[str, Any]) -> None:
        self.chunks += 1
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.result.usage = Usage(
                int(usage.get("prompt_tokens") or 0),
                int(usage.get("completion_tokens") or 0),
                int(usage.get("total_tokens") or 0),
            )
        if isinstance(chunk.get("model"), str) and chunk["model"]:
            self.result.model = chunk["model"]
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) not in (0, None):
                continue
            delta = choice.get("delta")
            if isinstance(delta, dict):
                self._delta(delta)
            if choice.get("finish_reason"):
                self.result.finish_reason = str(choice["finish_reason"])

    def _delta(self, delta: dict[str, Any]) -> None:
        rules = self.profile.reasoning
        # the text shown comes from one source per message (OpenRouter sends `reasoning` and the same text again
        # in `reasoning_details`): the first that speaks
        for name in rules.fields:
            value = delta.get(name)
            if isinstance(value, str) and value:
                self.result.reasoning_field = self.result.reasoning_field or name
                if self._shown_from in ("", "field"):
                    self._shown_from = "field"
                    self._add_reasoning(value)
                break
        details = delta.get(rules.details_field) if rules.details_field else None
        if isinstance(details, list) and details:
            merge_details(self._details, details)
            text = details_text(details)
            if text and self._shown_from in ("", "details"):
                self._shown_from = "details"
                self._add_reasoning(text)
        content = delta.get("content")
        if isinstance(content, str) and content:
            for kind, piece in self._think.feed(content):
                self._segment(kind, piece)
        for call in delta.get("tool_calls") or []:
            if isinstance(call, dict):
                self._answer_started()
                self.calls.add(call)
        skip = KNOWN_DELTA_FIELDS | set(rules.fields) | ({rules.details_field} if rules.details_field else set())
        for key, value in delta.items():
            if key not in skip and value is not None:
                self.result.extras[key] = merge_opaque(self.result.extras.get(key), value)

    def _segment(self, kind: str, piece: str) -> None:
        if kind == "reasoning":
            self._add_reasoning(piece)
        elif kind == "retract":
            moved = "".join(self._text)
            self._text.clear()
            self._reason_end = 0.0
            if moved:
                self._add_reasoning(moved, announce=False)
            if self._on_retract is not None:
                self._on_retract(moved)
        elif piece:
            self._answer_started()
            self._text.append(piece)
            if self._on_text is not None:
                self._on_text(piece)

    def _add_reasoning(self, text: str, *, announce: bool = True) -> None:
        if not text:
            return
        if not self._reason_start:
            self._reason_start = self._clock()
        self._reasoning.append(text)
        if announce and self._on_reasoning is not None:
            self._on_reasoning(text)

    def _answer_started(self) -> None:
        if self._reason_start and not self._reason_end:
            self._reason_end = self._clock()

    def finish(self, *, done: bool) -> Completion:
        for kind, piece in self._think.finish():
            self._segment(kind, piece)
        result = self.result
        result.text = "".join(self._text)
        result.reasoning = "".join(self._reasoning)
        if self._reason_start:
            end = self._reason_end or self._clock()
            result.reasoning_ms = max(0, int((end - self._reason_start) * 1000))
        if self._details:
            result.extras[self.profile.reasoning.details_field] = self._details
        result.tool_calls = self.calls.calls()
        result.done = done
        return result
