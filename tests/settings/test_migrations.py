"""Migrations: an append-only list on the raw document; the store runs the ones a file needs, writes the
new version on the next save, and a failing migration costs nothing but a reported problem."""

from __future__ import annotations

from typing import Any

from settings_support import read_json, write_settings

from weclaw_desktop.settings import ProblemKind, SettingsStore
from weclaw_desktop.settings.migrations import CURRENT_VERSION, MIGRATIONS, migrate


def _rename_rounds(doc: dict[str, Any]) -> dict[str, Any]:
    """v1 -> v2 of a made-up history: agent.rounds became agent.max_rounds."""
    agent = doc.get("agent")
    if isinstance(agent, dict) and "rounds" in agent:
        agent["max_rounds"] = agent.pop("rounds")
    return doc


def _dark_by_default(doc: dict[str, Any]) -> dict[str, Any]:
    """v2 -> v3: ui.dark (bool) became ui.theme."""
    ui = doc.get("ui")
    if isinstance(ui, dict) and "dark" in ui:
        ui["theme"] = "dark" if ui.pop("dark") else "light"
    return doc


STEPS = [_rename_rounds, _dark_by_default]


def test_the_shipped_list_matches_the_version() -> None:
    assert len(MIGRATIONS) + 1 == CURRENT_VERSION


def test_an_old_file_is_brought_up_to_date_and_saved_as_the_new_version() -> None:
    write_settings({"version": 1, "agent": {"rounds": 5}, "ui": {"dark": True}})
    store = SettingsStore(migrations=STEPS)
    assert store.errors == ()
    assert store.settings.agent.max_rounds == 5 and store.settings.ui.theme == "dark"
    store.update(lambda s: setattr(s.agent, "max_rounds", 6))
    saved = read_json()
    assert saved["version"] == 3 and saved["agent"]["max_rounds"] == 6 and "rounds" not in saved["agent"]
    assert saved["ui"]["theme"] == "dark" and "dark" not in saved["ui"]


def test_a_file_in_between_runs_only_the_steps_it_needs() -> None:
    doc = migrate({"version": 2, "agent": {"rounds": 5}, "ui": {"dark": False}}, STEPS)
    assert doc["version"] == 3 and doc["agent"] == {"rounds": 5}  # step 1 not run again
    assert doc["ui"] == {"theme": "light"}


def test_a_failing_migration_is_reported_and_the_file_read_as_it_is() -> None:
    def broken(doc: dict[str, Any]) -> dict[str, Any]:
        raise KeyError("agent")

    write_settings({"version": 1, "agent": {"max_rounds": 4}, "ui": {"theme": "dark"}})
    store = SettingsStore(migrations=[broken])
    [problem] = store.errors
    assert problem.path == "version" and problem.kind is ProblemKind.INVALID
    assert "could not upgrade it from version 1" in problem.message
    assert store.settings.agent.max_rounds == 4 and store.settings.ui.theme == "dark"


def test_a_migration_never_changes_the_document_it_was_given() -> None:
    original = {"version": 1, "agent": {"rounds": 5}}
    migrate(original, STEPS)
    assert original == {"version": 1, "agent": {"rounds": 5}}
