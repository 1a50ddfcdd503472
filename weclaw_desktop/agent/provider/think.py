"""``<think>…</think>`` inside streamed content, split from the answer as it streams.

Local servers (llama.cpp, LM Studio, older Ollama builds) put a reasoning model's thinking inside ``content``
between tags. The tags may be cut anywhere by chunk boundaries (``"<thi"`` + ``"nk>"``), so the parser holds back
any tail that could still become a tag and releases it once it cannot.

Rules:

- an opening tag counts only at the start of the message (nothing but whitespace before it, or right after an
  earlier block), so an answer that *talks about* ``<think>`` is left alone;
- a closing tag without an opening one (chat templates that open the block in the prompt, as the R1 distills
  do) turns everything said so far into reasoning: a ``retract`` segment tells the caller to move it;
- whitespace between a block and the answer is dropped;
- at the end of the stream an unclosed block is reasoning, and a held-back partial tag is released as what it was.
"""

from __future__ import annotations

from typing import Literal

Kind = Literal["text", "reasoning", "retract"]
Segment = tuple[Kind, str]


class ThinkParser:
    def __init__(self, tags: list[str]) -> None:
        self.tags = [t for t in tags if t]
        self._opens = {f"<{t}>": t for t in self.tags}
        self._closes = {f"</{t}>": t for t in self.tags}
        self._inside: str | None = None  # the tag whose block is open
        self._hold = ""  # a tail that may still become a tag
        self._lead = ""  # whitespace at the start of the answer, held until we know it precedes no tag
        self._at_start = True  # no answer text emitted yet (only whitespace, or only blocks)
        self._seen_block = False
        self._emitted = False  # any answer text emitted

    @property
    def active(self) -> bool:
        return bool(self.tags)

    def feed(self, text: str) -> list[Segment]:
        if not self.tags:
            return [("text", text)] if text else []
        out: list[Segment] = []
        buf = self._hold + text
        self._hold = ""
        while buf:
            if self._inside is not None:
                close = f"</{self._inside}>"
                pos = buf.find(close)
                if pos >= 0:
                    self._reason(out, buf[:pos])
                    buf = buf[pos + len(close) :]
                    self._inside = None
                    self._seen_block = True
                    self._at_start = True
                    continue
                keep = _partial_tail(buf, [close])
                self._reason(out, buf[: len(buf) - keep])
                self._hold = buf[len(buf) - keep :]
                return out
            if self._at_start:
                stripped = buf.lstrip()
                self._lead += buf[: len(buf) - len(stripped)]
                buf = stripped
                if not buf:
                    return out
                opened = next((tag for marker, tag in self._opens.items() if buf.startswith(marker)), None)
                if opened is not None:
                    self._lead = ""
                    self._inside = opened
                    buf = buf[len(opened) + 2 :]
                    continue
                if _partial_tail(buf, list(self._opens)) == len(buf):
                    self._hold = buf  # "<th": could still open a block
                    return out
                if self._seen_block:
                    self._lead = ""  # the gap between a block and the answer
                self._at_start = False
            # answer text: watch for a stray closing tag while no block has been seen
            stray = self._stray(buf) if not self._seen_block else None
            if stray is not None:
                pos, marker = stray
                self._text(out, buf[:pos])
                out.append(("retract", ""))
                buf = buf[pos + len(marker) :]
                self._seen_block = True
                self._at_start = True
                self._emitted = False
                continue
            keep = _partial_tail(buf, list(self._closes)) if not self._seen_block else 0
            self._text(out, buf[: len(buf) - keep])
            self._hold = buf[len(buf) - keep :]
            return out
        return out

    def finish(self) -> list[Segment]:
        """The end of the stream: release what was held back."""
        out: list[Segment] = []
        held, self._hold = self._hold, ""
        if self._inside is not None:
            self._reason(out, held)
        elif held:
            self._at_start = False
            self._text(out, held)
        return out

    def _stray(self, buf: str) -> tuple[int, str] | None:
        found = [(buf.find(marker), marker) for marker in self._closes]
        hits = [(pos, marker) for pos, marker in found if pos >= 0]
        return min(hits) if hits else None

    def _reason(self, out: list[Segment], text: str) -> None:
        if text:
            out.append(("reasoning", text))

    def _text(self, out: list[Segment], text: str) -> None:
        if self._lead and text:
            text, self._lead = self._lead + text, ""
        if text:
            self._emitted = True
            out.append(("text", text))


def _partial_tail(buf: str, markers: list[str]) -> int:
    """Length of the longest tail of ``buf`` that is a proper prefix of one of ``markers``."""
    best = 0
    for marker in markers:
        for size in range(min(len(marker) - 1, len(buf)), best, -1):
            if marker.startswith(buf[-size:]):
                best = size
                break
    return best
