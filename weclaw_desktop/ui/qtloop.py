"""The qasync event loop with asyncio's async-generator hooks installed.

qasync does not install ``sys.set_asyncgen_hooks`` when it runs, so a half-read async generator (an
openai stream abandoned by Stop) is finalised later by the garbage collector, outside the loop, and
warns. This subclass installs the hooks the way ``asyncio.BaseEventLoop.run_forever`` does. It uses
qasync's private ``_before_run_forever`` / ``_after_run_forever``; qasync is pinned and a test guards it.

It also avoids ``SignalInstance.emit()`` and ``SignalInstance.disconnect()`` from Python: in PySide6
6.12 on Python 3.11 each call drops one reference to ``True`` (bools are immortal only from 3.12), so
after enough calls the interpreter aborts with "bool_dealloc: deallocating True or False". qasync emits
a signal for every ``call_soon_threadsafe`` (each ``asyncio.to_thread`` result) and disconnects when a
socket is unwatched and when a loop closes. Here ``call_soon_threadsafe`` posts a Qt event instead
(thread-safe, returns nothing), and notifiers are deleted instead of disconnected (deleting a QObject
drops its connections). Blocking work runs in a standard ``ThreadPoolExecutor`` rather than qasync's
QThread executor; worker threads never touch Qt objects anyway.

pyproject.toml also excludes PySide6 6.12.0 on Python < 3.12, because application code emits signals too.
Even on a release without that leak, qasync's own notifier cleanup (disconnect, then let the garbage
collector delete the QSocketNotifier whenever it runs) crashed long test runs with segmentation faults in
``run_forever``; deleting the notifiers explicitly, as below, made 2 of 2 full runs clean where 2 of 2
crashed before (measured on 2026-11-30 with PySide6 6.11.3, qasync 0.28).
"""

from __future__ import annotations

import collections
import gc
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import qasync
import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent, QObject

_WAKE = QEvent.Type(QEvent.registerEventType())


class _Waker(QObject):
    """Runs callbacks handed over from other threads on the loop's (Qt main) thread."""

    def __init__(self, loop: WeclawEventLoop) -> None:
        super().__init__()
        self._loop = loop
        self._lock = threading.Lock()
        self._pending: collections.deque[tuple[Callable[..., Any], tuple[Any, ...], Any]] = collections.deque()

    def post(self, callback: Callable[..., Any], args: tuple[Any, ...], context: Any) -> None:
        with self._lock:
            self._pending.append((callback, args, context))
        QCoreApplication.postEvent(self, QEvent(_WAKE))

    def event(self, event: QEvent) -> bool:
        if event.type() != _WAKE:
            return super().event(event)
        while True:
            with self._lock:
                if not self._pending:
                    break
                callback, args, context = self._pending.popleft()
            if not self._loop.is_closed():
                self._loop.call_soon(callback, *args, context=context)
        return True


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

    _pool: ThreadPoolExecutor | None = None
    _waker: _Waker | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._waker = _Waker(self)  # made on the Qt thread, so posted events run there
        super().__init__(*args, **kwargs)

    def call_soon_threadsafe(self, callback: Callable[..., Any], *args: Any, context: Any = None) -> None:
        if self._waker is not None:
            self._waker.post(callback, args, context)

    def run_in_executor(self, executor: Any, callback: Callable[..., Any], *args: Any) -> Any:
        if executor is None:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(thread_name_prefix="weclaw-worker")
            executor = self._pool
        return super().run_in_executor(executor, callback, *args)

    # --- no SignalInstance.disconnect() (see the module docstring) ----------------------------------
    def _remove_reader(self, fd: Any) -> bool | None:
        return self._unwatch(self._read_notifiers, fd)

    def _remove_writer(self, fd: Any) -> bool | None:
        return self._unwatch(self._write_notifiers, fd)

    def _unwatch(self, notifiers: dict[Any, Any] | None, fd: Any) -> bool | None:
        if self.is_closed() or notifiers is None:
            return None
        notifier = notifiers.pop(fd, None)
        if notifier is None:
            return False
        _delete(notifier, later=True)  # may run inside a callback that this notifier triggered
        return True

    def close(self) -> None:
        if self.is_running():
            raise RuntimeError("Cannot close a running event loop")
        if self.is_closed():
            return
        signaller = self._QEventLoop__call_soon_signaller
        self._QEventLoop__call_soon_signal = None  # qasync would disconnect() it
        super().close()  # closes the self-pipe through _remove_reader above
        for notifiers in (self._read_notifiers or {}, self._write_notifiers or {}):
            for notifier in list(notifiers.values()):
                _delete(notifier)
            notifiers.clear()
        _delete(signaller)
        if self._waker is not None:
            _delete(self._waker)
            self._waker = None
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


def _delete(qobject: Any, *, later: bool = False) -> None:
    """Silence a QObject and delete it (now, or when Qt next runs); Qt drops its connections with it."""
    if not shiboken6.isValid(qobject):
        return
    if hasattr(qobject, "setEnabled"):
        qobject.setEnabled(False)
    qobject.blockSignals(True)
    if later:
        qobject.deleteLater()
    else:
        shiboken6.delete(qobject)


#: MainThreadGC freezes what start-up made this long after it started (the runtime and the last chat are loaded).
FREEZE_AFTER_MS = 4000


class MainThreadGC:
    """Run Python's cyclic garbage collector only on the Qt main thread.

    With automatic collection, a collection can start in whichever thread happens to allocate, e.g. a
    worker doing SQLite or archive work for ``asyncio.to_thread``. If that collection frees a QObject
    (qasync's timer object of a finished loop, a widget caught in a reference cycle), Qt destroys it off
    its thread, its timer stays registered, and the next timer tick segfaults in
    ``QTimerInfoList::activateTimers`` (seen in core dumps from the test suite). This object turns
    automatic collection off and collects from a Qt timer instead, generation by generation with the
    interpreter's own thresholds, so the cost stays what it was.
    """

    def __init__(self, interval_ms: int = 250, freeze_after_ms: int | None = FREEZE_AFTER_MS) -> None:
        from PySide6.QtCore import QTimer

        self._thresholds = gc.get_threshold()
        self._timer = QTimer()
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.collect_due)
        self._freeze = QTimer()
        self._freeze.setSingleShot(True)
        self._freeze.timeout.connect(self.freeze)
        self._freeze_after_ms = freeze_after_ms

    def start(self) -> None:
        gc.disable()
        self._timer.start()
        if self._freeze_after_ms is not None:
            self._freeze.start(self._freeze_after_ms)

    def freeze(self) -> int:
        """Once start-up is done: collect, then move every object alive now (modules, classes, the settings,
        the tool registry, the window) to the permanent generation (``gc.freeze``). They live as long as the
        app, and a full collection walked all ~200,000 of them: 150-160 ms on the UI thread, the longest
        stall of a long streamed answer. Later collections only walk what was made since. Returns how many
        objects were frozen."""
        gc.collect()
        gc.freeze()
        return gc.get_freeze_count()

    def stop(self) -> None:
        self._timer.stop()
        self._freeze.stop()
        gc.enable()

    def collect_due(self) -> int:
        """Collect the generations whose allocation counts passed their thresholds."""
        counts = gc.get_count()
        found = 0
        for generation in (2, 1, 0):
            if counts[generation] > self._thresholds[generation]:
                found += gc.collect(generation)
                break
        return found
