"""Rotating log files in the log dir, with secrets redacted from every line."""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

from weclaw_desktop.toolkit.redact import redact

LOG_FILE = "weclaw.log"
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class RedactingFormatter(logging.Formatter):
    """Formats as usual, then removes known secrets and token shapes (tracebacks included)."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


def setup_logging(log_dir: Path, *, level: int = logging.INFO, max_bytes: int = 2_000_000, backups: int = 5) -> Path:
    """Send the ``weclaw`` loggers to ``log_dir/weclaw.log`` (rotated). Idempotent per file."""
    log_dir.mkdir(parents=True, exist_ok=True)
    path = log_dir / LOG_FILE
    logger = logging.getLogger("weclaw")
    for handler in logger.handlers:
        if isinstance(handler, logging.handlers.RotatingFileHandler) and Path(handler.baseFilename) == path:
            return path
    for handler in list(logger.handlers):  # a previous data dir (tests switch WECLAW_HOME)
        if isinstance(handler, logging.handlers.RotatingFileHandler):
            logger.removeHandler(handler)
            handler.close()
    handler = logging.handlers.RotatingFileHandler(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")
    handler.setFormatter(RedactingFormatter(_FORMAT))
    logger.addHandler(handler)
    logger.setLevel(min(level, logger.level or level) if logger.level else level)
    for name in ("openai", "httpx2", "httpx"):  # the SDK logs request options at DEBUG
        logging.getLogger(name).setLevel(max(logging.getLogger(name).level, logging.WARNING))
    return path
