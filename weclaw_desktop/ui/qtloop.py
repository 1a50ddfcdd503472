"""The qasync event loop with asyncio's async-generator hooks installed.

qasync does not install ``sys.set_asyncgen_hooks`` when it runs, so a half-read async generator (an
openai stream abandoned by Stop) is finalised later by the garbage collector, outside the loop, and
warns. This subclass installs the hooks the way ``asyncio.BaseEventLoop.run_forever`` does. It uses
qasync's private ``_before_run_forever`` / ``_after_run_forever``; qasync is pinned and a test guards it.
"""

from __future__ import annotations

import sys
from typing import Any

import qasync


class WeclawEventLoop(qasync.QEventLoop):  # type: ignore[misc]
    _saved_hooks: Any = None

    def _before_run_forever(self) -> None:
        self._saved_hooks = sys.get_asyncgen_hooks()
        sys.set_asyncgen_hooks(firstiter=self._asyncgen_firstiter_hook, finalizer=self._asyncgen_finalizer_hook)
        super()._before_run_forever()

    def _after_run_forever(self) -> None:
        try:
            super()._after_run_forever()
        finally:
            if self._saved_hooks is not None:
                sys.set_asyncgen_hooks(*self._saved_hooks)
                self._saved_hooks = None
