"""The qasync event loop with asyncio's async-generator hooks installed, and a leak-free call_soon_threadsafe.

qasync does not install ``sys.set_asyncgen_hooks`` when it runs, so a half-read async generator (an
openai stream abandoned by Stop) is finalised later by the garbage collector, outside the loop, and
warns. This subclass installs the hooks the way ``asyncio.BaseEventLoop.run_forever`` does. It uses
qasync's private ``_before_run_forever`` / ``_after_run_forever``; qasync is pinned and a test guards it.

qasync's ``call_soon_threadsafe`` (behind every ``asyncio.to_thread``) emits a Qt signal. With PySide6
6.12, ``Signal.emit`` returns ``True`` without taking a reference, so each call drops one reference to
``True``; on Python 3.11 the interpreter aborts ("bool_dealloc: deallocating True or False") once the count
reaches zero, after roughly a thousand worker-thread calls. This subclass posts a Qt event instead
(``QCoreApplication.postEvent`` is thread-safe and returns nothing).

Other PySide6 calls have the same flaw (``SignalInstance.disconnect()``, which qasync calls on every
``remove_reader``/``remove_writer``, i.e. on every socket and pipe operation; any ``emit`` in UI code), so on
Python < 3.12 this module also gives ``True`` and ``False`` a huge reference count, which makes them
effectively immortal as they are in Python 3.12+ (where such leaks are harmless).
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Callable
from typing import Any

import qasync
from PySide6.QtCore import QCoreApplication, QEvent, QObject

_WAKE = QEvent.Type(QEvent.registerEventType())
_BOOL_REFCOUNT_RESERVE = 1 << 40


def _immortalize_bools() -> None:
    """Python < 3.12: raise the reference counts of True/False so a C extension's missing
    ``Py_INCREF`` on a returned bool can never bring them to zero. No-op on 3.12+ (immortal objects)."""
    if sys.version_info >= (3, 12):
        return
    import ctypes

    for obj in (True, False):
        refcount = ctypes.c_ssize_t.from_address(id(obj))
        if refcount.value < _BOOL_REFCOUNT_RESERVE:
            refcount.value += _BOOL_REFCOUNT_RESERVE


_immortalize_bools()


class _Waker(QObject):
    """Lives on the loop's (main) thread; runs queued thread-safe calls when its wake event arrives."""

    def __init__(self, drain: Callable[[], None]) -> None:
        super().__init__()
        self._drain = drain

    def event(self, ev: QEvent) -> bool:
        if ev.type() == _WAKE:
            self._drain()
            return True
        return super().event(ev)


class WeclawEventLoop(qasync.QEventLoop):  # type: ignore[misc]
    _saved_hooks: Any = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._threadsafe_calls: deque[tuple[Callable[..., Any], tuple[Any, ...], Any]] = deque()
        self._waker = _Waker(self._run_threadsafe_calls)

    def call_soon_threadsafe(self, callback: Callable[..., Any], *args: Any, context: Any = None) -> None:
        self._threadsafe_calls.append((callback, args, context))
        QCoreApplication.postEvent(self._waker, QEvent(_WAKE))

    def _run_threadsafe_calls(self) -> None:
        while self._threadsafe_calls and not self.is_closed():
            callback, args, context = self._threadsafe_calls.popleft()
            self.call_soon(callback, *args, context=context)

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
