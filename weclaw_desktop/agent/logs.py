"""Rotating log files in the log dir, with secrets redacted from every line."""

from __future__ import annotations

import contextlib
import logging
import logging.handlers
from pathlib import Path

from weclaw_desktop.toolkit.redact import redact

LOG_FILE = "weclaw.log"
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class QuietRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A log file that never prints "--- Logging error ---" tracebacks to stderr (a full disk, a removed
    folder): the record is dropped and counted, and writing resumes when the file can be written again."""

    dropped = 0

    def handleError(self, record: logging.LogRecord) -> None:
        type(self).dropped += 1
        stream = self.stream
        if stream is not None:  # reopen on the next record: the old stream may hold a broken buffer
            self.stream = None
            with contextlib.suppress(OSError, ValueError):
                stream.close()


class RedactingFormatter(logging.Formatter):
    """Formats as usual, then removes known secrets and token shapes (tracebacks included)."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


def setup_logging(log_dir: Path, *, level: int = logging.INFO, max_bytes: int = 2_000_000, backups: int = 5) -> Path:
    """Send the ``weclaw`` loggers to ``log_dir/weclaw.log`` (rotated). Idempotent per file.

    A log folder that cannot be made (a full or read-only disk) leaves logging off, quietly."""
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
    except OSError:
        return log_dir / LOG_FILE
    path = log_dir / LOG_FILE
    logger = logging.getLogger("weclaw")
    for handler in logger.handlers:
        if isinstance(handler, logging.handlers.RotatingFileHandler) and Path(handler.baseFilename) == path:
            return path
    for handler in list(logger.handlers):  # a previous data dir (tests switch WECLAW_HOME)
        if isinstance(handler, logging.handlers.RotatingFileHandler):
            logger.removeHandler(handler)
            handler.close()
    handler = QuietRotatingFileHandler(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8", delay=True)
    handler.setFormatter(RedactingFormatter(_FORMAT))
    logger.addHandler(handler)
    logger.setLevel(min(level, logger.level or level) if logger.level else level)
    for name in ("openai", "httpx2", "httpx"):  # the SDK logs request options at DEBUG
        logging.getLogger(name).setLevel(max(logging.getLogger(name).level, logging.WARNING))
    return path
