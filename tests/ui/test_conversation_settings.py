"""Settings > Model with several saved configurations (each with its own keyring entry, models and prices) and
Settings > Assistants, saved through the one settings store; what the user typed on one configuration survives
switching to another and back; a published price is a hint until the user types their own."""

from __future__ import annotations

from typing import Any

from fakeopenai import FakeOpenAI
from PySide6.QtCore import Qt
from uihelpers import configured_settings, until

from weclaw_desktop.settings import SettingsStore
from weclaw_desktop.settings.conversation import AssistantSettings


def open_dialog(window: Any) -> Any:
    dialog = window.open_settings_page("models")
    return dialog


async def test_several_configurations_are_edited_and_saved_each_with_its_own_key(
    make_window: Any, fake_openai: FakeOpenAI, memory_keyring: Any
) -> None:
    window = await make_window(configured_settings(fake_openai))
    dialog = open_dialog(window)
    page = dialog.providers_page
    assert page.configs.count() == 1
    page.add("Work OpenAI")
    assert page.configs.currentText() == "Work OpenAI"
    page.provider_page.preset.setCurrentIndex(page.provider_page.preset.findData("openai"))
    page.provider_page.model.setCurrentText("gpt-4o")
    page.provider_page.api_key.setText("sk-work-key")
    page.configs.setCurrentIndex(0)  # back to the first one: the second keeps what was typed
    assert page.provider_page.base_url.text() == fake_openai.base_url
    page.configs.setCurrentIndex(1)
    assert page.provider_page.model.currentText() == "gpt-4o"
    page.is_default.setChecked(True)
    assert dialog.save()
    s = window.store.settings
    assert [p.name for p in s.providers.entries] == ["default", "Work OpenAI"]
    work = s.providers.get("Work OpenAI")
    assert work is not None and work.base_url == "https://api.openai.com/v1" and work.model == "gpt-4o"
    assert work.api_key_name == "api_key.work-openai" and work.api_key_name != s.providers.entries[0].api_key_name
    assert window.secrets.get("api_key.work-openai") == "sk-work-key"
    assert s.providers.active == "Work OpenAI"
    # read back from the file: the store wrote it (off the UI thread: wait for it)
    assert window.store.flush() is None
    assert SettingsStore.open().settings.providers == s.providers


async def test_rename_and_delete_keep_one_default(make_window: Any, fake_openai: FakeOpenAI) -> None:
    window = await make_window(configured_settings(fake_openai))
    page = open_dialog(window).providers_page
    page.rename("Home")
    page.add("Spare")
    page.delete()  # the one shown (Spare)
    assert [page.configs.itemText(i) for i in range(page.configs.count())] == ["Home"]
    assert not page.delete_button.isEnabled()
    assert window.open_settings().save()
    assert window.store.settings.providers.active == "Home"


async def test_models_and_prices_per_configuration(make_window: Any, fake_openai: FakeOpenAI) -> None:
    settings = configured_settings(fake_openai)
    settings.provider.preset = "openai"
    settings.provider.model = "gpt-4o-mini"
    settings.provider.models = ["gpt-4o"]
    window = await make_window(settings)
    page = open_dialog(window).providers_page
    rows = {page.table.item(r, 0).text(): r for r in range(page.table.rowCount())}
    assert set(rows) == {"gpt-4o-mini", "gpt-4o"}
    r = rows["gpt-4o"]
    published = page.table.item(r, 2)
    assert published.text() == "2.5" and published.data(Qt.ItemDataRole.UserRole) == "published"
    page.table.item(rows["gpt-4o-mini"], 2).setText("0.2")  # the user's own price over the published one
    page.table.item(rows["gpt-4o-mini"], 3).setText("0.8")
    page.provider_page.model.setCurrentText("gpt-4.1")
    page.add_model.click()
    assert window.open_settings().save()
    entry = window.store.settings.provider
    assert entry.prices["gpt-4o-mini"].input_per_m == 0.2 and entry.prices["gpt-4o-mini"].output_per_m == 0.8
    assert "gpt-4o" not in entry.prices  # a published price stays a hint, it is not copied into the settings
    assert entry.model == "gpt-4.1" and entry.models == ["gpt-4o-mini", "gpt-4o"]  # the old default stays listed


async def test_assistants_page_edits_and_saves_assistants(make_window: Any, fake_openai: FakeOpenAI) -> None:
    window = await make_window(configured_settings(fake_openai))
    dialog = window.open_settings_page("assistants")
    page = dialog.assistants_page
    assert page.list.count() == 1 and not page.delete_button.isEnabled()
    page.add()
    page.name.setText("Echoer")
    page.icon.setText("🔁")
    page.prompt.setPlainText("Repeat what the user says.")
    page.tool_mode.setCurrentIndex(page.tool_mode.findData("only"))
    for i in range(page.tools.count()):
        item = page.tools.item(i)
        if item.data(Qt.ItemDataRole.UserRole) == "echo":
            item.setCheckState(Qt.CheckState.Checked)
    page.temperature.box.setChecked(True)
    page.temperature.spin.setValue(0.3)
    page.is_default.setChecked(True)
    page.list.setCurrentRow(0)  # switching away keeps the edits
    page.list.setCurrentRow(1)
    assert page.name.text() == "Echoer" and page.prompt.toPlainText() == "Repeat what the user says."
    assert dialog.save()
    a = window.store.settings.assistants
    echoer = next(x for x in a.entries if x.name == "Echoer")
    assert echoer.tools == ["echo"] and echoer.generation.temperature == 0.3 and echoer.generation.top_p is None
    assert a.default == echoer.id and echoer.icon == "🔁"
    # the composer's picker follows the save
    await until(
        lambda: any("Echoer" in act.text() for act in window.composer.assistant_picker.menu().actions()),
        what="the picker lists the new assistant",
    )


async def test_the_last_assistant_cannot_be_deleted(make_window: Any, fake_openai: FakeOpenAI) -> None:
    settings = configured_settings(fake_openai)
    settings.assistants.entries = [*settings.assistants.entries, AssistantSettings(id="x", name="X")]
    settings.assistants.default = "x"
    window = await make_window(settings)
    page = window.open_settings_page("assistants").assistants_page
    page.list.setCurrentRow(1)
    page.delete()
    assert page.list.count() == 1 and page.default == "weclaw"
    page.delete()
    assert page.list.count() == 1
