"""Guards for the Qt runtime the app is pinned to.

PySide6 6.12.0 on Python 3.11 drops a reference to ``True`` on every ``Signal.emit()`` and
``disconnect()`` (bools are immortal only from Python 3.12): after a few hundred signals the interpreter
aborts with "bool_dealloc". pyproject.toml excludes that release; this test fails if it comes back.
"""

from __future__ import annotations

import gc
import sys

from PySide6.QtCore import QObject, Signal


class _Emitter(QObject):
    fired = Signal(object)


def test_signal_emit_and_disconnect_keep_true_alive() -> None:
    emitter = _Emitter()
    got: list[int] = []
    emitter.fired.connect(got.append)
    gc.collect()
    before = sys.getrefcount(True)
    for i in range(2000):
        emitter.fired.emit(i)
    for _ in range(200):
        emitter.fired.disconnect(got.append)
        emitter.fired.connect(got.append)
    gc.collect()
    assert len(got) == 2000
    assert sys.getrefcount(True) >= before - 50, "this PySide6 leaks references to True (see pyproject pin)"


def test_loop_subclass_installs_asyncgen_hooks() -> None:
    """qasync's private run hooks still exist (we override them to install async-generator hooks)."""
    import qasync

    from weclaw_desktop.ui.qtloop import WeclawEventLoop

    assert issubclass(WeclawEventLoop, qasync.QEventLoop)
    for name in ("_before_run_forever", "_after_run_forever"):
        assert callable(getattr(qasync.QEventLoop, name)), name


async def test_running_loop_has_asyncgen_hooks() -> None:
    import asyncio

    loop = asyncio.get_running_loop()
    hooks = sys.get_asyncgen_hooks()
    assert hooks.firstiter is not None and getattr(hooks.firstiter, "__self__", None) is loop
    assert getattr(hooks.finalizer, "__self__", None) is loop


def test_main_thread_gc_collects_on_its_timer_not_automatically() -> None:
    import gc

    from PySide6.QtWidgets import QApplication

    from weclaw_desktop.ui.qtloop import MainThreadGC

    QApplication.instance() or QApplication([])
    was_enabled = gc.isenabled()
    collector = MainThreadGC(interval_ms=10)
    collector.start()
    try:
        assert not gc.isenabled()

        class Cycle:
            def __init__(self) -> None:
                self.me = self

        for _ in range(gc.get_threshold()[0] + 10):
            Cycle()
        assert collector.collect_due() > 0  # a due generation is collected, cycles included
    finally:
        collector.stop()
        if not was_enabled:
            gc.disable()


def test_main_thread_gc_freezes_what_start_up_made_and_still_collects_what_comes_after() -> None:
    """After start-up the long-lived objects are frozen (a full collection no longer walks them); cycles made
    later are still collected, so nothing made after the freeze leaks."""
    import gc

    from PySide6.QtWidgets import QApplication

    from weclaw_desktop.ui.qtloop import MainThreadGC

    QApplication.instance() or QApplication([])
    was_enabled = gc.isenabled()
    collector = MainThreadGC(interval_ms=10, freeze_after_ms=None)
    collector.start()
    try:

        class Cycle:
            def __init__(self) -> None:
                self.me = self

        long_lived = [Cycle() for _ in range(1000)]
        frozen = collector.freeze()
        assert frozen >= len(long_lived) and frozen == gc.get_freeze_count()
        assert not any(gc.is_tracked(c) and c in gc.get_objects(generation=2) for c in long_lived[:5])
        for _ in range(500):
            Cycle()
        assert gc.collect() >= 500, "cycles made after the freeze are still collected"
    finally:
        collector.stop()
        if not was_enabled:
            gc.disable()
