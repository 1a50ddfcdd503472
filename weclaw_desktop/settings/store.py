"""The settings store: the only code that reads or writes ``settings.json``.

    store = SettingsStore.open(paths)          # loads the file field by field (never raises on its content)
    store.settings                             # the settings in use: read them, never change them in place
    store.problems                             # what could not be read (SettingsProblem: path, what, used)
    store.update(lambda s: ...)                # change a copy, validate, write atomically, notify
    store.save(candidate)                      # the same with a whole edited copy (the settings dialog)
    unsubscribe = store.subscribe(on_change, sections={"tools"})   # on_change(SettingsChange)

Load (``loader``): every field is validated alone; one that cannot be used falls back by itself, and a
restriction falls back to a stricter value (``fallbacks``). The original file is copied beside it
(``settings.broken-<time>.json``) when anything was wrong. Keys this version does not know are kept.

Save: the candidate is validated as a whole, merged over the document as read (unknown keys stay;
a field still at its fallback gets the user's original value back, so a fix by hand is never lost and
the problem is still reported), written to a temp file, fsynced and renamed over the file. Saves are
serialised by a re-entrant lock (threads, and subscribers that save again); subscribers run on the
saving thread, in order, with the new settings and the sections that changed. A subscriber that fails
is logged and does not stop the others.

Two ways to write (the settings in memory and the notifications are the same in both):

- synchronous (the default; the CLI, tools, tests): the file is written before the settings change in
  memory; ``save`` raises OSError when it cannot be, and nothing changed then.
- write-behind (``store.write_behind(report)``; the GUI, whose thread must not wait for the disk's
  fsync): the settings change in memory and subscribers hear of it at once; the file is written by the
  store's one writer thread. Writes keep the order of the saves; when saves come faster than the disk,
  the writer skips to the newest document (the last save wins on disk; an older one never lands after
  a newer one). ``report(error)`` is called on the writer thread when a write fails (the old file stays
  whole; the settings stay in use; the next save or ``flush`` tries again) and with None when a write
  succeeds after one failed. ``flush()`` waits for the writes (the app calls it when it quits).
"""

from __future__ import annotations

import copy
import json
import logging
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from weclaw_desktop.paths import AppPaths, app_paths
from weclaw_desktop.settings import fallbacks as fb
from weclaw_desktop.settings.loader import MISSING, Loaded, Restore, get_path, parse_text, submodel, unreadable
from weclaw_desktop.settings.migrations import CURRENT_VERSION, Migration, file_version
from weclaw_desktop.settings.problems import ProblemKind, SettingsProblem
from weclaw_desktop.settings.schema import SECTIONS, InvalidMcpServer, McpServerSettings, Settings

log = logging.getLogger("weclaw.settings")

#: The copy of a file with problems is ``<stem>.broken-<YYYYmmdd-HHMMSS>.json`` beside it.
COPY_STEM = "settings"
#: The pseudo-section a subscriber names to hear about problems appearing or being resolved.
PROBLEMS = "problems"


@dataclass(frozen=True)
class SettingsChange:
    settings: Settings
    previous: Settings
    sections: frozenset[str]  # top-level sections whose values changed (``PROBLEMS`` when those did)
    problems: tuple[SettingsProblem, ...] = ()

    def touches(self, *sections: str) -> bool:
        return bool(self.sections.intersection(sections))


Subscriber = Callable[[SettingsChange], None]
#: ``report(error)`` of write-behind: the OSError of a failed write, None when writing works again.
WriteReport = Callable[[OSError | None], None]


@dataclass
class _Subscription:
    callback: Subscriber
    sections: frozenset[str] | None


@dataclass
class _State:
    settings: Settings
    problems: list[SettingsProblem]
    restores: list[Restore]
    document: dict[str, Any] | None
    broken_copy: Path | None = None
    subscribers: list[_Subscription] = field(default_factory=list)


class SettingsStore:
    def __init__(
        self,
        paths: AppPaths | None = None,
        *,
        settings: Settings | None = None,
        migrations: list[Migration] | None = None,
    ) -> None:
        """Load ``paths.settings_file``; with ``settings``, start from those instead (tests, tools)."""
        self.paths = paths or app_paths()
        self._migrations = migrations
        self._lock = threading.RLock()
        self._writer: _Writer | None = None
        if settings is not None:
            self._state = _State(_copy(settings), [], [], None)
        else:
            self._state = _State(Settings(), [], [], None)
            self._state = self._read()

    @classmethod
    def open(cls, paths: AppPaths | None = None) -> SettingsStore:
        return cls(paths)

    # --- reading ----------------------------------------------------------------------------------
    @property
    def path(self) -> Path:
        return self.paths.settings_file

    @property
    def settings(self) -> Settings:
        """The settings in use. Shared: never change it in place (use :meth:`update`)."""
        return self._state.settings

    @property
    def problems(self) -> tuple[SettingsProblem, ...]:
        """What the last load found (minus what saves resolved since), notes included."""
        return tuple(self._state.problems)

    @property
    def errors(self) -> tuple[SettingsProblem, ...]:
        """The problems that need the user (not the notes about unknown keys or a newer version)."""
        return tuple(p for p in self._state.problems if p.is_error)

    @property
    def broken_copy(self) -> Path | None:
        """The copy of the file as it was when it had problems (None when it had none)."""
        return self._state.broken_copy

    def snapshot(self) -> Settings:
        """A deep copy to edit and hand to :meth:`save`."""
        return _copy(self._state.settings)

    def reload(self) -> SettingsChange:
        """Read the file again (after the user fixed it by hand) and tell the subscribers."""
        with self._lock:
            self.flush()  # a write still on its way would land over what the user fixed
            previous = self._state.settings
            state = self._read()
            state.subscribers = self._state.subscribers
            self._state = state
            return self._notify(previous, set(SECTIONS) | {PROBLEMS})

    def _read(self) -> _State:
        path = self.path
        ctx = fb.Context(outputs_dir=self.paths.outputs)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return _State(Settings(), [], [], None)
        except OSError as exc:
            loaded = unreadable(f"cannot be read ({exc.strerror or exc})", ctx)
            data = b""
        else:
            try:
                text = data.decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                loaded = unreadable(f"is not UTF-8 text ({exc.reason} at byte {exc.start})", ctx)
            else:
                loaded = parse_text(text, ctx, self._migrations)
        state = _State(loaded.settings, loaded.problems, loaded.restores, loaded.document)
        if any(p.is_error for p in loaded.problems) and data:
            state.broken_copy = self._keep_copy(data)
        self._log(loaded, state.broken_copy)
        return state

    def _keep_copy(self, data: bytes) -> Path | None:
        """The file as it was, beside it; the newest earlier copy is reused when it is the same."""
        folder = self.path.parent
        earlier = sorted(folder.glob(f"{COPY_STEM}.broken-*.json"))
        for old in reversed(earlier[-1:]):
            try:
                if old.read_bytes() == data:
                    return old
            except OSError:
                pass
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for n in range(100):
            target = folder / f"{COPY_STEM}.broken-{stamp}{f'-{n}' if n else ''}.json"
            try:
                with open(target, "xb") as fh:
                    fh.write(data)
                return target
            except FileExistsError:
                continue
            except OSError as exc:
                log.error("could not keep a copy of %s: %s", self.path, exc)
                return None
        return None

    def _log(self, loaded: Loaded, copy_path: Path | None) -> None:
        for problem in loaded.problems:
            level = logging.INFO if not problem.is_error else logging.WARNING
            if problem.kind is ProblemKind.UNREADABLE:
                level = logging.ERROR
            log.log(level, "settings %s: %s", self.path, problem.line())
        if copy_path is not None:
            log.warning("settings: the file as it was is kept in %s", copy_path)

    # --- writing ----------------------------------------------------------------------------------
    def update(self, change: Callable[[Settings], object]) -> SettingsChange:
        """Apply ``change`` to a copy of the current settings and save it (read-modify-write, serialised)."""
        with self._lock:
            candidate = self.snapshot()
            change(candidate)
            return self.save(candidate)

    def save(self, settings: Settings) -> SettingsChange:
        """Validate ``settings`` (pydantic ValidationError if it is not valid), write it, notify.

        Synchronous: raises OSError when the file cannot be written; the settings in use are unchanged
        then. Write-behind: never raises OSError (the write is queued; a failure goes to ``report``)."""
        checked = Settings.model_validate(settings.model_dump())
        checked.mcp_invalid = list(settings.mcp_invalid)
        with self._lock:
            state = self._state
            doc, restores, invalid = self._document(checked)
            self._write(doc)  # write-behind: queued (the file follows), synchronous: written or raises
            checked.mcp_invalid = invalid
            previous = state.settings
            before = len(state.problems)
            kept_paths = {".".join(r.path) for r in restores}
            kept_entries = {f"mcp_servers[{e.index}]" for e in invalid}
            state.problems = [p for p in state.problems if _still_there(p, kept_paths, kept_entries)]
            state.settings, state.restores, state.document = checked, restores, doc
            sections = _changed(previous, checked) | ({PROBLEMS} if len(state.problems) != before else set())
            return self._notify(previous, sections)

    def accept_fallbacks(self) -> SettingsChange:
        """Write the values in use for every field that could not be read (the user's choice in the
        notice): the problems are resolved and the stricter values stay until the user changes them."""
        with self._lock:
            state = self._state
            before = len(state.problems)
            state.restores = []
            doc, _, _ = self._document(state.settings)
            self._write(doc)
            state.document = doc
            state.problems = [p for p in state.problems if p.kind is ProblemKind.MCP_ENTRY or not p.is_error]
            sections = {PROBLEMS} if len(state.problems) != before else set()
            return self._notify(state.settings, sections)

    def _document(self, settings: Settings) -> tuple[dict[str, Any], list[Restore], list[InvalidMcpServer]]:
        """The JSON document to write: ``settings`` over the document as read, originals restored."""
        base = self._state.document
        dump = settings.model_dump(mode="json")
        doc = _merge(Settings, base or {}, dump)
        servers, invalid = _merge_servers(base, dump["mcp_servers"], settings.mcp_invalid)
        doc["mcp_servers"] = servers
        pending: list[Restore] = []
        for restore in self._state.restores:
            if base is None or any(get_path(dump, p) != v for p, v in restore.fallback.items()):
                continue  # changed since: the new value is the user's, the problem is resolved
            for p in restore.fallback:
                _put(doc, p, get_path(base, p))
            pending.append(restore)
        doc["version"] = max(file_version(base or {}), CURRENT_VERSION)
        return doc, pending, invalid

    # --- write-behind -----------------------------------------------------------------------------
    def write_behind(self, report: WriteReport | None = None) -> None:
        """From now on write the file on the store's writer thread (see the module docstring); ``report``
        hears of failed writes (on the writer thread: hand it on to your own thread)."""
        with self._lock:
            if self._writer is None:
                self._writer = _Writer(self._write_doc)
            self._writer.report = report

    def flush(self, timeout: float | None = None) -> OSError | None:
        """Wait until every save so far is on disk (a write that failed is tried once more). Returns the
        error when the file still holds older settings (None: written, or nothing to write). Synchronous
        stores have nothing pending."""
        writer = self._writer
        return writer.flush(timeout) if writer is not None else None

    @property
    def unsaved(self) -> bool:
        """True while the settings in use are not (yet) all in the file (write-behind only)."""
        writer = self._writer
        return writer is not None and writer.unsaved

    def _write(self, doc: dict[str, Any]) -> None:
        """Write-behind: hand ``doc`` to the writer (no one changes a document after it was made: each
        save builds a new one); synchronous: write it now."""
        if self._writer is not None:
            self._writer.submit(doc)
        else:
            self._write_doc(doc)

    def _write_doc(self, doc: dict[str, Any]) -> None:
        """Temp file beside it, fsync, rename over it (and sync the folder): a reader never sees half a
        file and a failed write leaves the old one whole."""
        text = json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
        path = self.path
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".settings-", suffix=".json.tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            _replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _sync_dir(path.parent)

    # --- subscribers ------------------------------------------------------------------------------
    def subscribe(self, callback: Subscriber, sections: Iterable[str] | None = None) -> Callable[[], None]:
        """Call ``callback(change)`` after every save that changes one of ``sections`` (None: any).
        Returns the function that unsubscribes."""
        sub = _Subscription(callback, frozenset(sections) if sections is not None else None)
        with self._lock:
            self._state.subscribers.append(sub)

        def unsubscribe() -> None:
            with self._lock:
                if sub in self._state.subscribers:
                    self._state.subscribers.remove(sub)

        return unsubscribe

    def _notify(self, previous: Settings, sections: set[str]) -> SettingsChange:
        change = SettingsChange(self._state.settings, previous, frozenset(sections), self.problems)
        if not sections:
            return change
        for sub in list(self._state.subscribers):
            if sub.sections is not None and not (sub.sections & change.sections):
                continue
            try:
                sub.callback(change)
            except Exception:
                log.exception("settings subscriber %r failed", sub.callback)
        return change


class _Writer:
    """The store's one writer thread (write-behind): the newest document waiting, written in order.

    ``submit`` replaces what waits (an older document not yet written is skipped: the newer one holds
    all of it) and gives the worker a turn; the single worker thread writes what waits, then what came
    meanwhile. The worker of a ThreadPoolExecutor is joined when Python exits, so a write on its way is
    finished even when nobody calls :meth:`flush`."""

    def __init__(self, write: Callable[[dict[str, Any]], None]) -> None:
        self._write = write
        self._cond = threading.Condition()
        self._waiting: dict[str, Any] | None = None  # the newest document not yet written
        self._failed: tuple[dict[str, Any], OSError] | None = None  # the newest document, when it failed
        self._busy = False  # the worker is writing a document
        self._failing = False  # the last write failed (the next good one is reported too)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="weclaw-settings")
        self.report: WriteReport | None = None

    @property
    def unsaved(self) -> bool:
        with self._cond:
            return self._busy or self._waiting is not None or self._failed is not None

    def submit(self, doc: dict[str, Any]) -> None:
        with self._cond:
            self._waiting = doc
            self._failed = None  # the new document holds everything the failed one did
        self._pool.submit(self._run)

    def _run(self) -> None:
        with self._cond:
            doc, self._waiting = self._waiting, None
            if doc is None:
                return  # an earlier turn wrote it already
            self._busy = True
        error: OSError | None = None
        try:
            self._write(doc)
        except OSError as exc:
            error = exc
            log.error("settings not saved (still in use; tried again at the next save): %s", exc)
        with self._cond:
            self._busy = False
            if self._waiting is None:
                self._failed = (doc, error) if error is not None else None
            was_failing, self._failing = self._failing, error is not None
            self._cond.notify_all()
        report = self.report
        if report is not None and (error is not None or was_failing):
            try:
                report(error)
            except Exception:
                log.exception("settings write report %r failed", report)

    def flush(self, timeout: float | None = None) -> OSError | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            retry = self._failed is not None and self._waiting is None and not self._busy
            if retry and self._failed is not None:
                self._waiting, self._failed = self._failed[0], None
        if retry:
            self._pool.submit(self._run)
        with self._cond:
            while self._busy or self._waiting is not None:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return TimeoutError("the settings are still being written")
                self._cond.wait(left)
            return self._failed[1] if self._failed is not None else None


# --- helpers --------------------------------------------------------------------------------------------
def _copy(settings: Settings) -> Settings:
    out = settings.model_copy(deep=True)
    out.mcp_invalid = list(settings.mcp_invalid)
    return out


def _changed(old: Settings, new: Settings) -> set[str]:
    a, b = old.model_dump(mode="json"), new.model_dump(mode="json")
    out = {s for s in SECTIONS if a.get(s) != b.get(s)}
    if [e.raw for e in old.mcp_invalid] != [e.raw for e in new.mcp_invalid]:
        out |= {"mcp_servers", PROBLEMS}
    return out


def _still_there(p: SettingsProblem, kept: set[str], entries: set[str]) -> bool:
    if p.kind is ProblemKind.INVALID and p.path != "version":
        return p.path in kept
    if p.kind is ProblemKind.MCP_ENTRY:
        return p.path in entries
    return True  # the whole file, notes: until the next load


def _merge(cls: Any, raw: dict[str, Any], dump: dict[str, Any]) -> dict[str, Any]:
    """``dump`` over ``raw``, section by section: keys ``raw`` has and the schema does not are kept
    (after the schema's own, in the order they had)."""
    out: dict[str, Any] = {}
    for name, f in cls.model_fields.items():
        if name not in dump:
            continue
        sub = submodel(f.annotation)
        if sub is not None and isinstance(raw.get(name), dict) and isinstance(dump[name], dict):
            out[name] = _merge(sub, raw[name], dump[name])
        else:
            out[name] = dump[name]  # a fresh model_dump: nobody else holds it
    for key, value in raw.items():
        if key not in cls.model_fields:
            out[key] = copy.deepcopy(value)
    return out


def _merge_servers(
    base: dict[str, Any] | None, dumps: list[dict[str, Any]], invalid: list[InvalidMcpServer]
) -> tuple[list[Any], list[InvalidMcpServer]]:
    """Valid servers (with the keys they had that this version does not know) and, at their places,
    the unusable entries exactly as written. Returns the entries and the unusable ones re-indexed."""
    raw = base.get("mcp_servers") if base is not None else None
    bad = {e.index for e in invalid}
    by_name: dict[str, dict[str, Any]] = {}
    if isinstance(raw, list):
        for i, entry in enumerate(raw):
            if i not in bad and isinstance(entry, dict) and isinstance(entry.get("name"), str):
                by_name.setdefault(entry["name"], entry)
    entries: list[Any] = [_merge(McpServerSettings, by_name.get(d["name"], {}), d) for d in dumps]
    placed: list[InvalidMcpServer] = []
    for entry in sorted(invalid, key=lambda e: e.index):
        at = min(entry.index, len(entries))
        entries.insert(at, copy.deepcopy(entry.raw))
        placed.append(InvalidMcpServer(raw=entry.raw, errors=entry.errors, index=at))
    return entries, placed


def _put(doc: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    """Set (or, for MISSING, remove) ``path`` in ``doc``, creating objects on the way."""
    node = doc
    for key in path[:-1]:
        nxt = node.get(key)
        if not isinstance(nxt, dict):
            if value is MISSING:
                return
            nxt = node[key] = {}
        node = nxt
    if value is MISSING:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = copy.deepcopy(value)


def _replace(tmp: str, path: Path) -> None:
    """``os.replace``; on Windows a reader (an editor, the virus scanner) may hold the file for a moment."""
    for attempt in range(5):
        try:
            os.replace(tmp, path)
            return
        except PermissionError:
            if sys.platform != "win32" or attempt == 4:
                raise
            time.sleep(0.05 * (attempt + 1))


def _sync_dir(folder: Path) -> None:
    """Make the rename itself durable (POSIX); Windows has no directory handles to sync."""
    if sys.platform == "win32":
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
