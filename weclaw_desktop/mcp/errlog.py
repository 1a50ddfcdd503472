"""Where a stdio server's stderr goes: through a pipe, redacted line by line, into its log file.

A server may print its own token in a traceback; copying its stderr through :func:`redact` keeps the
secrets WeClaw gave it out of ``logs/mcp-<server>.log``. The last lines are kept in memory for the
diagnostic shown when the server fails to start. A daemon thread does the copying (a blocking read of a
pipe is the one portable way); it ends when the server and every copy of the pipe's write end close.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import deque
from pathlib import Path
from typing import IO, TextIO

from weclaw_desktop.toolkit.redact import redact


class StderrSink:
    def __init__(self, path: Path | None, *, keep: int = 20) -> None:
        self.path = path
        self.tail: deque[str] = deque(maxlen=keep)
        read_fd, write_fd = os.pipe()
        self._writer: TextIO = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        self._thread = threading.Thread(target=self._pump, args=(read_fd,), name="mcp-stderr", daemon=True)
        self._thread.start()

    @property
    def writer(self) -> TextIO:
        """Give this to the child process as its stderr."""
        return self._writer

    def close_writer(self) -> None:
        """Close our copy of the write end once the child has its own (so its exit ends the pump)."""
        with contextlib.suppress(OSError):
            self._writer.close()

    def join(self, timeout: float = 1.0) -> None:
        self._thread.join(timeout)

    def last_lines(self, count: int = 5) -> str:
        lines = [line for line in list(self.tail) if line.strip()]
        return " | ".join(line.strip() for line in lines[-count:])

    def _pump(self, read_fd: int) -> None:
        out: IO[str] | None = None
        try:
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                out = open(self.path, "a", encoding="utf-8", errors="replace")  # noqa: SIM115 - closed below
            with os.fdopen(read_fd, "rb") as pipe:
                for raw in pipe:
                    line = redact(raw.decode("utf-8", "replace").rstrip("\r\n"))
                    self.tail.append(line)
                    if out is not None:
                        out.write(line + "\n")
                        out.flush()
        except OSError:
            pass
        finally:
            if out is not None:
                out.close()
