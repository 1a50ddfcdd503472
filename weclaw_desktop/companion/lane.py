"""What both transfer directions share (:class:`~weclaw_desktop.companion.inbox.Inbox`, phone -> desktop, and
:class:`~weclaw_desktop.companion.outbox.Outbox`, desktop -> phone): the master key their file keys derive
from, the clock, how they emit events and push to the phone, and the transfer store once the link is open."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from weclaw_desktop.companion.keys import MasterKey
from weclaw_desktop.companion.transfer_store import TransferStore

Emit = Callable[..., None]
Push = Callable[[str, str, dict[str, Any]], None]


class TransferLane:
    def __init__(self, master: MasterKey, clock: Callable[[], float], emit: Emit, push: Push) -> None:
        self.master = master
        self.clock = clock
        self.emit = emit
        self.push = push
        self._store: TransferStore | None = None

    @property
    def store(self) -> TransferStore:
        if self._store is None:
            raise RuntimeError("the phone link is not open")
        return self._store
