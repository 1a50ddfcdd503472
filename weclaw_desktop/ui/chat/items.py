"""What the chat shows, as data: one item per message, tool call and notice (no widgets).

The chat view keeps every item of the open chat and creates widgets only for the items on and near the
screen (``ui/chat/column.py``); a widget can be dropped and made again from its item at any time, so
everything a widget must show again — the text, the call's status, whether the arguments were unfolded,
another feature's per-message state in :attr:`ChatItem.data` — lives here.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any

from weclaw_desktop.i18n import Text
from weclaw_desktop.ui.tool_board import CallInfo

_keys = itertools.count(1)

#: Rough layout figures for an item not measured yet (px); measured heights replace them.
LINE_PX = 20
CHARS_PER_PX = 1 / 7.5


@dataclass(eq=False, kw_only=True)
class ChatItem:
    key: int = field(default_factory=lambda: next(_keys))
    #: Free per-item state for features that decorate the widgets (branches, usage, selections...):
    #: kept while the chat is open, so a widget made again shows the same thing.
    data: dict[str, Any] = field(default_factory=dict)
    height: int = 0  # measured at measured_width; 0 = never measured
    measured_width: int = 0

    def estimate(self, width: int) -> int:
        return 48

    def search_text(self) -> str:
        return ""


@dataclass(eq=False, kw_only=True)
class MessageItem(ChatItem):
    """A user or assistant message. While it streams, :meth:`append` collects the pieces in O(1)."""

    role: str  # user | assistant
    status: str = "complete"  # complete | streaming | partial (stream cut) | cancelled (stopped)
    created_at: float = field(default_factory=time.time)
    message_id: int = 0  # the stored row (0 while streaming or not stored)
    run_id: str = ""
    reasoning: str = ""
    reasoning_ms: int = 0
    attachments: list[Any] = field(default_factory=list)
    _parts: list[str] = field(default_factory=list)
    _joined: str = ""
    _joined_len: int = 0
    _estimated: tuple[int, int, int] = (0, -1, 0)  # (width, text length, estimate): the chat asks often

    @classmethod
    def of(cls, role: str, text: str = "", **fields: Any) -> MessageItem:
        item = cls(role=role, **fields)
        item.set_text(text)
        return item

    @property
    def text(self) -> str:
        if self._joined_len != len(self._parts):
            self._joined = "".join(self._parts)
            self._parts = [self._joined] if self._joined else []
            self._joined_len = len(self._parts)
        return self._joined

    def set_text(self, text: str) -> None:
        self._parts = [text] if text else []
        self._joined, self._joined_len = text, len(self._parts)

    def append(self, delta: str) -> None:
        self._parts.append(delta)

    @property
    def streaming(self) -> bool:
        return self.status == "streaming"

    def estimate(self, width: int) -> int:
        text = self.text
        if self._estimated[:2] == (width, len(text)):
            return self._estimated[2]
        per_line = max(20, int(max(200, width - 60) * CHARS_PER_PX))
        lines = sum(1 + len(line) // per_line for line in text.split("\n")) if len(text) < 20_000 else len(text) // 40
        self._estimated = (width, len(text), 36 + lines * LINE_PX)
        return self._estimated[2]

    def search_text(self) -> str:
        return self.text


@dataclass(eq=False, kw_only=True)
class CallItem(ChatItem):
    """A tool call's card. The card's folds are kept here."""

    call: CallInfo
    expanded: bool = False  # arguments unfolded
    full_output: bool = False  # "Show full output"

    def estimate(self, width: int) -> int:
        return 96 if self.call.finished else 64

    def search_text(self) -> str:
        return f"{self.call.function}\n{self.call.output or self.call.error}"


@dataclass(eq=False, kw_only=True)
class NoticeItem(ChatItem):
    """A one-line notice (an error, "Stopped.", a file from the phone). A :class:`Text` follows the language."""

    message: str | Text
    kind: str = "info"  # info | warning | error

    def estimate(self, width: int) -> int:
        return 30

    def search_text(self) -> str:
        return str(self.message)
