"""The file tool's search: by name glob and/or by content, bounded in files scanned, results and time.

Runs in a worker thread; it checks a stop flag so a cancelled call stops walking, skips denied folders
(pathguard), does not follow folder symlinks, and skips hidden folders and bulky tool folders
(.git, node_modules, __pycache__ ...) unless asked.
"""

from __future__ import annotations

import fnmatch
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from weclaw_desktop.tools.pathguard import PathGuard
from weclaw_desktop.tools.textio import sniff

SKIPPED_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache", ".cache"}
)


@dataclass
class SearchSpec:
    root: Path
    name_glob: str | None
    content: str | None
    regex: bool
    case_sensitive: bool
    include_hidden: bool
    max_results: int
    max_files: int
    time_limit_s: float
    max_content_bytes: int


@dataclass
class Hit:
    path: Path
    line: int | None = None
    text: str | None = None


@dataclass
class SearchOutcome:
    hits: list[Hit] = field(default_factory=list)
    files_scanned: int = 0
    stopped_by: str | None = None  # "results" | "files" | "time" | "cancelled"
    skipped_denied: int = 0
    skipped_large: int = 0


def compile_content(spec: SearchSpec) -> re.Pattern[str] | None:
    if spec.content is None:
        return None
    flags = 0 if spec.case_sensitive else re.IGNORECASE
    source = spec.content if spec.regex else re.escape(spec.content)
    return re.compile(source, flags)


def _name_matches(name: str, glob: str | None, case_sensitive: bool) -> bool:
    if glob is None:
        return True
    if case_sensitive:
        return fnmatch.fnmatchcase(name, glob)
    return fnmatch.fnmatchcase(name.casefold(), glob.casefold())


def _grep(path: Path, pattern: re.Pattern[str], limit_bytes: int) -> tuple[int, str] | None:
    """The first matching line (1-based number, text) of a text file, or None."""
    with open(path, "rb") as fh:
        data = fh.read(limit_bytes)
    sniffed = sniff(data[:65536], path)
    if sniffed.is_binary or sniffed.encoding is None:
        return None
    text = data.decode(sniffed.encoding, errors="replace")
    match = pattern.search(text)
    if match is None:
        return None
    line_no = text.count("\n", 0, match.start()) + 1
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    line = text[start : end if end != -1 else len(text)].strip()
    if len(line) > 200:
        col = match.start() - start
        line = "…" + line[max(0, col - 80) : col + 120] + "…"
    return line_no, line


def run_search(
    spec: SearchSpec,
    guard: PathGuard,
    stop: threading.Event,
    progress: Callable[[float | None, str], None],
) -> SearchOutcome:
    """Walk ``spec.root`` and collect hits. Blocking: call it through ``asyncio.to_thread``."""
    outcome = SearchOutcome()
    pattern = compile_content(spec)
    deadline = time.monotonic() + spec.time_limit_s
    last_report = 0.0
    for dirpath, dirnames, filenames in os.walk(spec.root, followlinks=False):
        here = Path(dirpath)
        kept = []
        for d in sorted(dirnames):
            if not spec.include_hidden and (d.startswith(".") or d in SKIPPED_DIRS):
                continue
            if guard.denied_match(here / d) is not None:  # walked paths are real: no links followed
                outcome.skipped_denied += 1
                continue
            kept.append(d)
        dirnames[:] = kept
        for name in sorted(filenames):
            if stop.is_set():
                outcome.stopped_by = "cancelled"
                return outcome
            if not spec.include_hidden and name.startswith("."):
                continue
            if outcome.files_scanned >= spec.max_files:
                outcome.stopped_by = "files"
                return outcome
            if time.monotonic() > deadline:
                outcome.stopped_by = "time"
                return outcome
            outcome.files_scanned += 1
            path = here / name
            if not _name_matches(name, spec.name_glob, spec.case_sensitive):
                continue
            if guard.denied_match(path) is not None or (path.is_symlink() and not guard.is_allowed(path)):
                outcome.skipped_denied += 1
                continue
            if pattern is None:
                outcome.hits.append(Hit(path))
            else:
                try:
                    if path.stat().st_size > spec.max_content_bytes:
                        outcome.skipped_large += 1
                        continue
                    found = _grep(path, pattern, spec.max_content_bytes)
                except OSError:
                    continue
                if found is None:
                    continue
                outcome.hits.append(Hit(path, found[0], found[1]))
            if len(outcome.hits) >= spec.max_results:
                outcome.stopped_by = "results"
                return outcome
            now = time.monotonic()
            if now - last_report > 0.2:
                last_report = now
                progress(None, f"scanned {outcome.files_scanned} files, {len(outcome.hits)} found")
        now = time.monotonic()
        if now - last_report > 0.2:
            last_report = now
            progress(None, f"scanned {outcome.files_scanned} files, {len(outcome.hits)} found")
    return outcome
