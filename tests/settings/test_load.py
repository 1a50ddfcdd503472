"""Loading settings.json field by field: what a bad value costs (only itself), what it never costs (the
restrictions: they fail closed), and that the user's own text survives until they change it.

Real files in a temp WECLAW_HOME; the store is the code under test, nothing is mocked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from settings_support import read_json, settings_path, user_file, write_settings

from weclaw_desktop.paths import app_paths
from weclaw_desktop.settings import ProblemKind, SettingsStore
from weclaw_desktop.settings.fallbacks import strict_rules
from weclaw_desktop.settings.migrations import migrate
from weclaw_desktop.toolkit.approval import ApprovalRequest
from weclaw_desktop.toolkit.base import Origin, Risk


def _paths(store: SettingsStore) -> list[str]:
    return [p.path for p in store.errors]


def test_one_bad_field_costs_only_itself() -> None:
    """agent.max_rounds: "ten" -> 12 alone; the provider, deny list, switches, folders, theme, language and
    every MCP server are as the user wrote them, and the problem says where, what and what is used."""
    write_settings(user_file(agent__max_rounds="ten"))
    store = SettingsStore.open()
    s = store.settings
    assert s.agent.max_rounds == 12
    assert (s.provider.base_url, s.provider.model) == ("https://api.deepseek.com/v1", "fake-model")
    assert s.agent.exposure == "all"
    assert s.tools.policy.deny == ["faulty"] and s.tools.policy.disabled == ["shouty"]
    assert s.tools.policy.disabled_risks == []  # nothing about the policy was unreadable: no lock
    assert s.tools.allowed_roots == ["/srv/projects", "~/Documents"]
    assert (s.ui.language, s.ui.theme) == ("zh", "dark")
    assert [m.name for m in s.mcp_servers] == ["time", "web"]
    [problem] = store.errors
    assert problem.path == "agent.max_rounds" and problem.kind is ProblemKind.INVALID
    assert "valid integer" in problem.message and '"ten"' in problem.message
    assert problem.used == "using the default 12" and problem.effects == () and problem.kept


def test_the_users_text_is_written_back_until_they_change_that_field() -> None:
    """A save of another field keeps "ten" in the file (and the problem); changing max_rounds resolves it."""
    write_settings(user_file(agent__max_rounds="ten"))
    store = SettingsStore.open()
    store.update(lambda s: setattr(s.ui, "theme", "light"))
    doc = read_json()
    assert doc["agent"]["max_rounds"] == "ten" and doc["ui"]["theme"] == "light"
    assert _paths(store) == ["agent.max_rounds"]
    assert _paths(SettingsStore.open()) == ["agent.max_rounds"]  # and again on the next start

    store.update(lambda s: setattr(s.agent, "max_rounds", 20))
    assert read_json()["agent"]["max_rounds"] == 20
    assert store.errors == () and SettingsStore.open().errors == ()


def test_use_these_values_writes_the_fallbacks() -> None:
    write_settings(user_file(agent__max_rounds="ten", tools__allowed_roots="/srv"))
    store = SettingsStore.open()
    outputs = str(app_paths().outputs)
    assert store.settings.tools.allowed_roots == [outputs]
    store.accept_fallbacks()
    doc = read_json()
    assert doc["agent"]["max_rounds"] == 12 and doc["tools"]["allowed_roots"] == [outputs]
    assert store.errors == () and SettingsStore.open().errors == ()


def test_the_broken_file_is_copied_beside_it_once() -> None:
    """The copy has the exact bytes; a second start with the same problem reuses it, no pile of copies."""
    original = json.dumps(user_file(agent__max_rounds="ten")).encode()
    write_settings(original)
    store = SettingsStore.open()
    copy = store.broken_copy
    assert copy is not None and copy.parent == settings_path().parent
    assert copy.name.startswith("settings.broken-") and copy.suffix == ".json"
    assert copy.read_bytes() == original
    assert SettingsStore.open().broken_copy == copy
    assert sorted(p.name for p in copy.parent.glob("settings.broken-*")) == [copy.name]


def test_a_clean_file_has_no_problems_and_no_copy() -> None:
    write_settings(user_file())
    store = SettingsStore.open()
    assert store.problems == () and store.broken_copy is None
    assert not list(settings_path().parent.glob("settings.broken-*"))


def test_a_missing_file_is_a_first_start_not_a_problem() -> None:
    """No file: defaults as they are (not the strict fallbacks), nothing written until a save."""
    store = SettingsStore.open()
    assert store.problems == ()
    assert store.settings.tools.policy.disabled_risks == [] and store.settings.tools.allowed_roots == []
    assert not settings_path().exists()


# --- restrictions fail closed ------------------------------------------------------------------------
def test_unreadable_deny_list_switches_off_risky_tools_and_keeps_the_rest() -> None:
    write_settings(user_file(tools__policy={"deny": "faulty", "disabled": ["shouty"]}))
    store = SettingsStore.open()
    policy = store.settings.tools.policy
    assert policy.deny == [] and policy.disabled == ["shouty"] and policy.disabled_risks == ["medium", "high"]
    [problem] = store.errors
    assert problem.path == "tools.policy.deny" and problem.effects == ("tools-locked",)
    assert "fails closed" in problem.line()
    assert store.settings.tools.allowed_roots == ["/srv/projects", "~/Documents"]  # untouched


@pytest.mark.parametrize(
    "policy",
    [
        "deny everything",
        {"deny": ["faulty"], "disabled": "shouty"},
        {"deny": ["faulty"], "profile": 3},
        {"deny": ["faulty"], "disabled_risks": ["extreme"]},
    ],
)
def test_any_unreadable_part_of_the_policy_locks(policy: object) -> None:
    write_settings(user_file(tools__policy=policy))
    store = SettingsStore.open()
    assert store.settings.tools.policy.disabled_risks == ["medium", "high"]
    assert all("tools-locked" in p.effects for p in store.errors)


def test_unreadable_allow_list_is_just_empty() -> None:
    """An allow list only ever adds tools: its default (empty) is already the strict value."""
    write_settings(user_file(tools__policy={"deny": ["faulty"], "allow": "x"}))
    store = SettingsStore.open()
    assert store.settings.tools.policy.disabled_risks == [] and store.settings.tools.policy.deny == ["faulty"]
    assert [p.effects for p in store.errors] == [()]


def test_unreadable_allowed_roots_leave_only_the_outputs_folder() -> None:
    write_settings(user_file(tools__allowed_roots=["/srv", 7], tools__outputs_dir="/data/made-by-weclaw"))
    store = SettingsStore.open()
    assert store.settings.tools.allowed_roots == ["/data/made-by-weclaw"]  # the user's outputs folder
    assert store.errors[0].effects == ("roots-outputs",)


def _rule(store: SettingsStore, origin: Origin, risk: Risk, tool: str = "echo") -> str:
    req = ApprovalRequest(tool, "say", f"{tool}_say", {}, risk, origin, "s1")
    return store.settings.agent.approvals.rule_for(req)


def test_an_unreadable_approval_rule_cell_gets_the_strict_rule_alone() -> None:
    rules = {"gui": {"low": "allow", "medium": "sometimes", "high": "allow"}, "schedule": {"medium": "allow"}}
    write_settings(user_file(agent__approvals={"rules": rules}))
    store = SettingsStore.open()
    assert _paths(store) == ["agent.approvals.rules.gui.medium"]
    assert _rule(store, Origin.GUI, Risk.MEDIUM) == "ask"  # the unreadable cell: strict
    assert _rule(store, Origin.GUI, Risk.HIGH) == "allow"  # the user's own cells: as written
    assert _rule(store, Origin.SCHEDULE, Risk.MEDIUM) == "allow"


def test_unreadable_approval_rules_ask_for_non_low_and_deny_schedule() -> None:
    write_settings(user_file(agent__approvals={"rules": "allow all", "remembered": ["faulty_crash"]}))
    store = SettingsStore.open()
    for origin in (Origin.GUI, Origin.CLI, Origin.COMPANION):
        assert _rule(store, origin, Risk.LOW) == "allow"
        assert _rule(store, origin, Risk.MEDIUM) == "ask" and _rule(store, origin, Risk.HIGH) == "ask"
    assert _rule(store, Origin.SCHEDULE, Risk.MEDIUM) == "deny" and _rule(store, Origin.SCHEDULE, Risk.HIGH) == "deny"
    assert store.settings.agent.approvals.remembered == ["faulty_crash"]  # readable: kept
    assert store.errors[0].effects == ("approvals-strict",)


def test_unreadable_tool_rules_make_every_rule_at_least_strict() -> None:
    """A per-tool override list that cannot be read may have held denials: the origin rules get stricter
    (never looser: a user's own 'deny' stays)."""
    rules = {"gui": {"low": "allow", "medium": "allow", "high": "deny"}}
    write_settings(user_file(agent__approvals={"rules": rules, "tool_rules": ["mcp_github"]}))
    store = SettingsStore.open()
    approvals = store.settings.agent.approvals
    assert approvals.tool_rules == {}
    assert approvals.rules["gui"] == {"low": "allow", "medium": "ask", "high": "deny"}
    assert approvals.rules["schedule"]["high"] == "deny"


def test_unreadable_remembered_approvals_are_forgotten() -> None:
    write_settings(user_file(agent__approvals={"remembered": "faulty_crash"}))
    store = SettingsStore.open()
    assert store.settings.agent.approvals.remembered == []
    assert store.errors[0].effects == ("remembered-cleared",)


def test_a_whole_section_that_is_not_an_object_keeps_the_other_sections() -> None:
    write_settings(user_file(tools="all of them"))
    store = SettingsStore.open()
    s = store.settings
    assert s.provider.base_url == "https://api.deepseek.com/v1" and [m.name for m in s.mcp_servers] == ["time", "web"]
    assert s.tools.policy.disabled_risks == ["medium", "high"]
    assert s.tools.allowed_roots == [str(app_paths().outputs)]
    assert set(store.errors[0].effects) == {"tools-locked", "roots-outputs"}
    store.update(lambda x: setattr(x.ui, "theme", "light"))
    assert read_json()["tools"] == "all of them"  # still the user's text


# --- a file that cannot be read at all ---------------------------------------------------------------
@pytest.mark.parametrize(
    "content",
    ['{"provider": {"base_url": "https://x"}, "tools": ', b"\xff\xfe\x00garbage", "[1, 2, 3]", ""],
    ids=["truncated", "not-utf8", "a-list", "empty"],
)
def test_a_corrupt_file_means_defaults_with_every_restriction_strict(content: str | bytes) -> None:
    path = write_settings(content)
    before = path.read_bytes()
    store = SettingsStore.open()
    s = store.settings
    assert s.provider.base_url == "" and s.agent.max_rounds == 12
    assert s.tools.policy.disabled_risks == ["medium", "high"]
    assert s.agent.approvals.rules == strict_rules() and s.agent.approvals.remembered == []
    assert s.tools.allowed_roots == [str(app_paths().outputs)]
    [problem] = store.errors
    assert problem.kind is ProblemKind.UNREADABLE and problem.path == ""
    assert set(problem.effects) == {"tools-locked", "approvals-strict", "roots-outputs"}
    assert path.read_bytes() == before  # not touched by loading
    if before:
        assert store.broken_copy is not None and store.broken_copy.read_bytes() == before
    store.update(lambda x: setattr(x.ui, "theme", "dark"))
    saved = read_json()  # a save writes a valid file with the strict values (the copy keeps the original)
    assert saved["tools"]["policy"]["disabled_risks"] == ["medium", "high"] and saved["ui"]["theme"] == "dark"
    assert SettingsStore.open().errors == ()


def test_truncated_json_names_line_and_column() -> None:
    write_settings('{\n  "provider": {\n    "model": "x",\n  }\n}')
    [problem] = SettingsStore.open().errors
    assert "not valid JSON at line 4 column 3" in problem.message


def test_a_file_that_cannot_be_opened_is_strict_too() -> None:
    """An OSError on reading (here: a folder where the file should be; also a permission error) is the
    unreadable case: strict restrictions, and a save reports the OSError instead of pretending."""
    path = settings_path()
    path.mkdir(parents=True)
    store = SettingsStore.open()
    assert store.errors[0].kind is ProblemKind.UNREADABLE and "cannot be read" in store.errors[0].message
    assert store.settings.tools.policy.disabled_risks == ["medium", "high"]
    with pytest.raises(OSError):
        store.update(lambda s: setattr(s.ui, "theme", "dark"))
    assert store.settings.ui.theme == "system"  # nothing changed in memory either


# --- keys of a newer version ---------------------------------------------------------------------------
def test_unknown_keys_are_kept_everywhere_and_only_noted() -> None:
    doc = user_file()
    doc["sync"] = {"enabled": True}
    doc["tools"]["policy"]["deny_paths"] = ["~/.ssh"]
    doc["ui"]["font_size"] = 14
    doc["mcp_servers"][0]["oauth"] = {"client_id": "abc"}
    write_settings(doc)
    store = SettingsStore.open()
    assert store.errors == ()
    notes = {p.path for p in store.problems}
    assert notes == {"sync", "tools.policy.deny_paths", "ui.font_size", "mcp_servers[0].oauth"}
    assert store.broken_copy is None  # nothing was wrong
    store.update(lambda s: setattr(s.ui, "theme", "light"))
    saved = read_json()
    assert saved["sync"] == {"enabled": True} and saved["ui"]["font_size"] == 14
    assert saved["tools"]["policy"]["deny_paths"] == ["~/.ssh"]
    assert saved["mcp_servers"][0]["oauth"] == {"client_id": "abc"}


def test_a_newer_versions_file_keeps_its_version_number(tmp_path: Path) -> None:
    write_settings({**migrate(user_file()), "version": 7})  # a newer version's file has today's sections
    store = SettingsStore.open()
    assert [p.kind for p in store.problems] == [ProblemKind.NEWER] and store.errors == ()
    store.update(lambda s: setattr(s.ui, "theme", "light"))
    assert read_json()["version"] == 7  # never written as an older version
