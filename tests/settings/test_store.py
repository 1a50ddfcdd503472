"""Saving: atomic (a reader never sees half a file, a failed write leaves the old file), serialised (two
threads never lose each other's change), and announced to subscribers with what changed."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from settings_support import read_json, settings_path, user_file, write_settings

from weclaw_desktop.settings import PROBLEMS, Settings, SettingsChange, SettingsStore


def test_concurrent_updates_from_two_threads_never_interleave_or_lose_a_write() -> None:
    """Two threads switch tools off (200 saves each) while a third reads the file as fast as it can: every
    read is whole, valid JSON, and in the end every one of the 400 switches is in the file."""
    write_settings(user_file())
    store = SettingsStore.open()
    stop = threading.Event()
    bad_reads: list[str] = []
    reads = 0

    def reader() -> None:
        nonlocal reads
        while not stop.is_set():
            try:
                json.loads(settings_path().read_text(encoding="utf-8"))
                reads += 1
            except ValueError as exc:  # half a file
                bad_reads.append(str(exc))

    def writer(prefix: str) -> None:
        for i in range(200):
            store.update(lambda s, i=i: setattr(s.tools.policy, "disabled", [*s.tools.policy.disabled, f"{prefix}{i}"]))

    threads = [threading.Thread(target=writer, args=(p,)) for p in "ab"]
    watcher = threading.Thread(target=reader)
    watcher.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    watcher.join()
    disabled = set(read_json()["tools"]["policy"]["disabled"])
    assert {f"a{i}" for i in range(200)} <= disabled and {f"b{i}" for i in range(200)} <= disabled
    assert set(store.settings.tools.policy.disabled) == disabled
    assert bad_reads == [] and reads > 0
    assert not [p for p in settings_path().parent.iterdir() if p.name.startswith(".settings-")]  # no temp left


def test_a_failed_write_leaves_the_old_file_and_the_settings_in_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """The crash case: the rename never happens (disk full, power cut before it). The file on disk is the
    old one, whole; the temp file is gone; memory still holds the old settings; nobody was notified."""
    write_settings(user_file())
    before = settings_path().read_bytes()
    store = SettingsStore.open()
    seen: list[SettingsChange] = []
    store.subscribe(seen.append)

    def fail(*_args: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="No space left"):
        store.update(lambda s: setattr(s.ui, "theme", "light"))
    assert settings_path().read_bytes() == before
    assert store.settings.ui.theme == "dark" and seen == []
    assert not [p for p in settings_path().parent.iterdir() if p.name.startswith(".settings-")]


def test_an_invalid_candidate_is_refused_whole() -> None:
    write_settings(user_file())
    store = SettingsStore.open()
    candidate = store.snapshot()
    candidate.agent.__dict__["max_rounds"] = 1000  # past validate_assignment, as a buggy page might
    with pytest.raises(ValidationError):
        store.save(candidate)
    assert read_json()["agent"]["max_rounds"] == 9 and store.settings.agent.max_rounds == 9


def test_subscribers_hear_what_changed_and_only_what_they_asked_for() -> None:
    store = SettingsStore.open()
    everything: list[SettingsChange] = []
    tools_only: list[SettingsChange] = []
    store.subscribe(everything.append)
    unsubscribe = store.subscribe(tools_only.append, {"tools"})
    store.update(lambda s: setattr(s.ui, "theme", "dark"))
    store.update(lambda s: setattr(s.tools.policy, "disabled", ["faulty"]))
    assert [sorted(c.sections) for c in everything] == [["ui"], ["tools"]]
    assert [c.settings.tools.policy.disabled for c in tools_only] == [["faulty"]]
    assert everything[1].previous.tools.policy.disabled == [] and everything[1].settings is store.settings
    unsubscribe()
    store.update(lambda s: setattr(s.tools.policy, "disabled", []))
    assert len(tools_only) == 1 and len(everything) == 3
    store.update(lambda s: None)  # nothing changed: written, but nobody is bothered
    assert len(everything) == 3


def test_a_failing_subscriber_does_not_stop_the_others_or_the_save(caplog: pytest.LogCaptureFixture) -> None:
    store = SettingsStore.open()
    heard: list[str] = []

    def broken(_change: SettingsChange) -> None:
        raise RuntimeError("subscriber bug")

    store.subscribe(broken)
    store.subscribe(lambda c: heard.append(c.settings.ui.theme))
    store.update(lambda s: setattr(s.ui, "theme", "dark"))
    assert heard == ["dark"] and read_json()["ui"]["theme"] == "dark"
    assert "subscriber bug" in caplog.text


def test_a_subscriber_may_save_again() -> None:
    """Re-entrant: a subscriber that saves (e.g. a component that normalises a value) does not deadlock."""
    store = SettingsStore.open()

    def follow(change: SettingsChange) -> None:
        if change.settings.ui.theme == "dark" and not change.settings.ui.close_to_tray:
            store.update(lambda s: setattr(s.ui, "close_to_tray", True))

    store.subscribe(follow, {"ui"})
    store.update(lambda s: setattr(s.ui, "theme", "dark"))
    assert read_json()["ui"]["close_to_tray"] is True


def test_problems_changes_are_announced() -> None:
    write_settings(user_file(agent__max_rounds="ten"))
    store = SettingsStore.open()
    heard: list[frozenset[str]] = []
    store.subscribe(lambda c: heard.append(c.sections), {PROBLEMS})
    store.update(lambda s: setattr(s.agent, "max_rounds", 5))
    assert heard == [frozenset({"agent", PROBLEMS})] and store.errors == ()


def test_reload_reads_the_fixed_file_and_tells_everyone() -> None:
    write_settings(user_file(agent__max_rounds="ten"))
    store = SettingsStore.open()
    heard: list[SettingsChange] = []
    store.subscribe(heard.append)
    write_settings(user_file(agent__max_rounds=30))  # the user fixed it in an editor
    store.reload()
    assert store.settings.agent.max_rounds == 30 and store.errors == ()
    assert heard and "agent" in heard[0].sections


def test_a_store_seeded_with_settings_writes_them_whole(tmp_path: Path) -> None:
    seeded = Settings()
    seeded.provider.model = "m"
    store = SettingsStore(settings=seeded)
    seeded.provider.model = "changed after"  # the store took a copy
    store.update(lambda s: setattr(s.ui, "theme", "dark"))
    assert read_json()["providers"]["entries"][0]["model"] == "m"
