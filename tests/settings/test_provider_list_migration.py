"""The real migration v1 -> v2 (one ``provider`` section -> a list of saved configurations): a user's file from
before keeps its endpoint, model, keyring entry and every other setting; garbage in the old section never stops
the load; the store writes version 2 and never migrates twice."""

from __future__ import annotations

from typing import Any

import pytest
from settings_support import read_json, user_file, write_settings

from weclaw_desktop.agent.runtime import AgentRuntime
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import ProviderSettings, Settings, SettingsStore
from weclaw_desktop.settings.migrations import CURRENT_VERSION, migrate, v1_to_v2_provider_list


def v1_file() -> dict[str, Any]:
    doc = user_file()
    doc["provider"] = {
        "preset": "deepseek",
        "base_url": "https://api.deepseek.com/v1",
        "model": "deepseek-chat",
        "api_key_name": "api_key",
        "timeout_s": 90,
    }
    doc["ui"]["font"] = "Noto"  # unknown key elsewhere: untouched
    return doc


def test_version_2_is_the_provider_list() -> None:
    assert CURRENT_VERSION == 2


def test_a_v1_file_keeps_its_provider_as_the_one_active_entry() -> None:
    write_settings(v1_file())
    store = SettingsStore.open()
    assert store.errors == ()
    s = store.settings
    [entry] = s.providers.entries
    assert (entry.name, entry.preset, entry.model, entry.timeout_s) == ("deepseek", "deepseek", "deepseek-chat", 90)
    assert entry.api_key_name == "api_key"  # the key stored in the keyring before is still found
    assert s.providers.active == "deepseek" and s.provider is entry
    assert (
        s.agent.max_rounds == 9
        and s.tools.policy.deny == ["faulty"]
        and [m.name for m in s.mcp_servers]
        == [
            "time",
            "web",
        ]
    )
    store.update(lambda x: setattr(x.ui, "theme", "light"))
    saved = read_json()
    assert saved["version"] == 2 and "provider" not in saved
    assert saved["providers"]["active"] == "deepseek"
    assert saved["ui"]["font"] == "Noto" and saved["ui"]["theme"] == "light"
    again = SettingsStore.open()  # read back: version 2, not migrated again, same entry
    assert again.errors == () and again.settings.providers == s.providers.model_copy()


def test_the_key_of_a_migrated_configuration_is_still_used(memory_keyring: Any) -> None:
    SecretStore().set("api_key", "sk-before-the-update")
    write_settings(v1_file())
    rt = AgentRuntime.create(store=SettingsStore.open(), logs=False)
    try:
        assert rt.api_key() == "sk-before-the-update"
        assert rt.provider_config().api_key == "sk-before-the-update"
    finally:
        rt.db.close()


@pytest.mark.parametrize(
    ("old", "name"),
    [
        ({"base_url": "http://localhost:11434/v1", "model": "qwen3"}, "localhost"),
        ({"preset": "custom", "base_url": "https://llm.example.org/v1"}, "llm.example.org"),
        ({}, "default"),
        ({"name": "Work", "model": "m"}, "Work"),
    ],
)
def test_the_entry_gets_a_name_from_what_it_has(old: dict[str, Any], name: str) -> None:
    doc = migrate({"version": 1, "provider": old})
    assert doc["providers"]["entries"][0]["name"] == name and doc["providers"]["active"] == name


@pytest.mark.parametrize("garbage", ["openai", 42, None, ["a"]])
def test_a_provider_section_that_is_not_an_object_costs_only_that_section(garbage: Any) -> None:
    write_settings({"version": 1, "provider": garbage, "agent": {"max_rounds": 7}})
    store = SettingsStore.open()
    assert store.settings.agent.max_rounds == 7
    assert [p.path for p in store.errors] == ["providers.entries"]
    assert store.settings.provider == ProviderSettings()  # the default configuration, and the app starts


def test_a_file_that_already_has_the_list_is_left_alone() -> None:
    doc = {"version": 1, "providers": {"active": "b", "entries": [{"name": "b"}]}, "provider": {"model": "old"}}
    out = v1_to_v2_provider_list(dict(doc))
    assert out["providers"] == doc["providers"] and out["provider"] == {"model": "old"}


def test_code_that_builds_settings_the_old_way_gets_one_entry() -> None:
    s = Settings(provider=ProviderSettings(base_url="https://x/v1", model="m"))
    assert [p.model for p in s.providers.entries] == ["m"] and s.provider.base_url == "https://x/v1"
    s.provider.model = "n"  # the active entry itself
    assert s.providers.entries[0].model == "n"


def test_entries_are_never_empty_and_names_stay_unique() -> None:
    s = Settings()
    s.providers.entries = []
    assert len(s.providers.entries) == 1
    s.providers.entries = [ProviderSettings(name="a"), ProviderSettings(name="a")]
    assert [p.name for p in s.providers.entries] == ["a", "a (2)"]
    s.providers.active = "gone"
    assert s.provider.name == "a"
