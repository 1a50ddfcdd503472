"""One printed line per check: ``ok``/``FAIL``, name, time, detail."""

from __future__ import annotations

import sys
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TextIO


class CheckFailed(Exception):
    """A check found something wrong; the message is the line's detail."""


@dataclass
class CheckLine:
    name: str
    ok: bool
    detail: str
    seconds: float

    def text(self) -> str:
        status = "ok" if self.ok else "FAIL"
        return f"{status:<4}  {self.name:<16} {self.seconds * 1000:7.0f} ms  {self.detail}"


@dataclass
class SelfTestReport:
    out: TextIO = field(default_factory=lambda: sys.stdout)
    lines: list[CheckLine] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)

    @property
    def ok(self) -> bool:
        return bool(self.lines) and all(line.ok for line in self.lines)

    def _record(self, name: str, ok: bool, detail: str, t0: float) -> None:
        line = CheckLine(name, ok, " ".join(detail.split()), time.perf_counter() - t0)
        self.lines.append(line)
        print(line.text(), file=self.out, flush=True)

    def check(self, name: str, fn: Callable[[], str]) -> bool:
        """Run ``fn``; its return value is the detail. Any exception is a failure, never a crash."""
        t0 = time.perf_counter()
        try:
            detail = fn()
        except Exception as exc:  # a self-test reports every failure and goes on
            self._record(name, False, _describe(exc), t0)
            return False
        self._record(name, True, detail, t0)
        return True

    async def acheck(self, name: str, fn: Callable[[], Awaitable[str]]) -> bool:
        t0 = time.perf_counter()
        try:
            detail = await fn()
        except Exception as exc:
            self._record(name, False, _describe(exc), t0)
            return False
        self._record(name, True, detail, t0)
        return True

    def summary(self) -> str:
        passed = sum(line.ok for line in self.lines)
        total = len(self.lines)
        took = time.perf_counter() - self.started
        if self.ok:
            return f"self-test passed: {passed}/{total} checks in {took:.2f} s"
        failed = ", ".join(line.name for line in self.lines if not line.ok)
        return f"self-test FAILED: {total - passed} of {total} checks failed ({failed}) in {took:.2f} s"


def _describe(exc: BaseException) -> str:
    if isinstance(exc, CheckFailed):
        return str(exc)
    frame = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f" at {frame[0].filename.rsplit('/', 1)[-1]}:{frame[0].lineno}" if frame else ""
    return f"{type(exc).__name__}: {exc}{where}"
