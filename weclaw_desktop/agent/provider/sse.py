"""Server-sent events from a byte stream (the WHATWG event-stream rules, enough for chat completions).

Own parsing instead of the SDK's stream class because the provider must see what the SDK hides: whether the
stream ended with ``data: [DONE]``, how many keep-alive comments arrived (they must not count as progress), and
which event carried invalid JSON.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Event:
    data: str
    event: str = ""


class SSEReader:
    """Feeds bytes, yields events; counts comment lines (``: keep-alive``)."""

    def __init__(self) -> None:
        self._buffer = b""
        self._data: list[str] = []
        self._event = ""
        self.comments = 0
        self._first = True

    def feed(self, chunk: bytes) -> list[Event]:
        # lines are cut at a moving position and the rest kept once: slicing the buffer after every line
        # copied the rest of a burst (hundreds of events in one read) once per line
        buffer = self._buffer + chunk if self._buffer else chunk
        out: list[Event] = []
        pos = 0
        while True:
            cut = _line_end(buffer, pos)
            if cut is None:
                break
            end, size = cut
            event = self._line(buffer[pos:end])
            pos = end + size
            if event is not None:
                out.append(event)
        self._buffer = buffer[pos:]
        return out

    def finish(self) -> list[Event]:
        """The end of the body: a last line without its newline, and an event without its blank line."""
        out: list[Event] = []
        if self._buffer:
            line, self._buffer = self._buffer, b""
            event = self._line(line)
            if event is not None:
                out.append(event)
        if self._data:
            out.append(Event("\n".join(self._data), self._event))
            self._data, self._event = [], ""
        return out

    def _line(self, raw: bytes) -> Event | None:
        text = raw.decode("utf-8", errors="replace")
        if self._first:
            self._first = False
            text = text.removeprefix("\ufeff")
        if not text:
            if not self._data:
                self._event = ""
                return None
            event = Event("\n".join(self._data), self._event)
            self._data, self._event = [], ""
            return event
        if text.startswith(":"):
            self.comments += 1
            return None
        name, _, value = text.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        return None


def _line_end(buffer: bytes, pos: int = 0) -> tuple[int, int] | None:
    """Position and length of the first line break (\\r\\n, \\n or \\r) at or after ``pos``; None when the line
    is not complete."""
    lf = buffer.find(b"\n", pos)
    cr = buffer.find(b"\r", pos, lf if lf >= 0 else len(buffer))
    if cr < 0:
        return (lf, 1) if lf >= 0 else None
    if cr + 1 == len(buffer):
        return None  # a \r at the end may be the first half of \r\n
    return (cr, 2) if buffer[cr + 1] == 0x0A else (cr, 1)


async def events(chunks: AsyncIterator[bytes], reader: SSEReader) -> AsyncIterator[Event]:
    """Every event of a body."""
    async for chunk in chunks:
        for event in reader.feed(chunk):
            yield event
    for event in reader.finish():
        yield event
