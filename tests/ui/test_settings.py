"""Settings dialog: the key goes to the keyring (or session-only with a warning), model list and
connection test against the fake endpoint, approvals revocable, first-run panel."""

from __future__ import annotations

from typing import Any

import keyring
from fakeopenai import FakeOpenAI, text_reply
from uihelpers import configured_settings, until

from weclaw_desktop.i18n import set_language
from weclaw_desktop.secrets import SERVICE, SecretStore
from weclaw_desktop.settings import Settings, SettingsStore
from weclaw_desktop.ui.settings_dialog import SettingsDialog


def _dialog(qtbot: Any, settings: Settings | None = None, store: SecretStore | None = None) -> SettingsDialog:
    set_language("en")
    dialog = SettingsDialog(SettingsStore(settings=settings or Settings()), store or SecretStore())
    qtbot.addWidget(dialog)
    return dialog


def test_key_is_saved_to_the_keyring_with_the_backend_shown(qtbot: Any, memory_keyring: Any) -> None:
    dialog = _dialog(qtbot)
    page = dialog.provider_page
    assert not page.notice.isVisible()
    assert page.backend.text().startswith("Stored in: ")
    page.preset.setCurrentIndex(page.preset.findData("deepseek"))
    assert page.base_url.text() == "https://api.deepseek.com/v1"
    assert page.model.currentText() == "deepseek-flash"
    page.api_key.setText("sk-saved-123")
    assert dialog.save()
    assert keyring.get_password(SERVICE, "api_key") == "sk-saved-123"
    assert page.key_result == "keyring"
    saved = SettingsStore.open().settings
    assert saved.provider.preset == "deepseek" and saved.provider.model == "deepseek-flash"
    from weclaw_desktop.paths import app_paths

    assert "sk-saved-123" not in app_paths().settings_file.read_text(encoding="utf-8")


def test_without_a_keyring_the_dialog_warns_and_keeps_the_key_for_the_session(qtbot: Any, no_keyring: None) -> None:
    store = SecretStore()
    dialog = _dialog(qtbot, store=store)
    dialog.show()
    page = dialog.provider_page
    assert page.notice.isVisible()
    assert "No system keyring is available" in page.notice_text.text()
    assert "WECLAW_API_KEY" in page.notice_text.text()
    page.base_url.setText("http://127.0.0.1:9/v1")
    page.model.setEditText("m")
    page.api_key.setText("sk-session-only")
    assert dialog.save()
    assert page.key_result == "session"
    assert store.get("api_key") == "sk-session-only"  # usable for this run
    assert not store.persistent


async def test_fetch_models_and_test_connection(qtbot: Any, memory_keyring: Any, fake_openai: FakeOpenAI) -> None:
    dialog = _dialog(qtbot, configured_settings(fake_openai))
    page = dialog.provider_page
    page.api_key.setText("sk-typed")
    models = await page.fetch_models()
    assert models == ["fake-model", "fake-model-2"]
    assert [page.model.itemText(i) for i in range(page.model.count())] == models
    assert page.model.currentText() == "fake-model"
    assert await page.test_connection()
    assert page.test_result.text() == "Connected. 2 models available."
    fake_openai.models_status = 401
    assert not await page.test_connection()
    assert page.test_result.text().startswith("Failed: ")


def test_bad_value_keeps_the_dialog_open_and_loses_nothing(qtbot: Any, memory_keyring: Any) -> None:
    SettingsStore.open().save(Settings())
    dialog = _dialog(qtbot)
    dialog.agent_page.max_rounds.setValue(7)
    dialog.files_page.outputs.setText("/tmp/out")
    dialog.provider_page.base_url.setText("http://x/v1")
    assert dialog.save()
    assert SettingsStore.open().settings.agent.max_rounds == 7


def test_remembered_approvals_can_be_revoked(qtbot: Any, memory_keyring: Any) -> None:
    """Every "always allow" rule is listed with its scope (older plain function names as "this action")
    and can be revoked; what is kept is saved as scoped rules."""
    from weclaw_desktop.toolkit.approval import AllowRule

    settings = Settings()
    folder = AllowRule(scope="folder", tool="file", function="file_delete", folder="/data/projects")
    server = AllowRule(scope="server", tool="mcp_github")
    settings.agent.approvals = settings.agent.approvals.model_copy(
        update={"remembered": ["echo_shout", "work_run"], "always": [folder, server]}
    )
    dialog = _dialog(qtbot, settings)
    page = dialog.approvals_page
    assert [page.remembered.item(i).text() for i in range(4)] == [
        "echo → shout",
        "work → run",
        "file → delete in /data/projects",
        "every tool of the MCP server github",
    ]
    page.remembered.setCurrentRow(0)
    page.remembered.item(0).setSelected(True)
    page.remembered.item(3).setSelected(True)
    page.revoke.click()
    page.rules[("gui", "high")].setCurrentIndex(page.rules[("gui", "high")].findData("deny"))
    assert dialog.save()
    saved = SettingsStore.open().settings.agent.approvals
    assert saved.remembered == []
    assert [(r.scope, r.function) for r in saved.always] == [("function", "work_run"), ("folder", "file_delete")]
    assert saved.rules["gui"]["high"] == "deny"


def test_extra_pages_load_and_apply(qtbot: Any, memory_keyring: Any) -> None:
    from PySide6.QtWidgets import QCheckBox

    class PhonePage(QCheckBox):
        def load(self, settings: Settings) -> None:
            self.setChecked(settings.companion.enabled)

        def apply(self, settings: Settings) -> None:
            settings.companion.enabled = self.isChecked()

    page = PhonePage("Phone link")
    set_language("en")
    dialog = SettingsDialog(SettingsStore(settings=Settings()), SecretStore(), extra_pages=[("Phone", page)])
    qtbot.addWidget(dialog)
    assert dialog.nav.item(dialog.nav.count() - 1).text() == "Phone"
    page.setChecked(True)
    assert dialog.save()
    assert SettingsStore.open().settings.companion.enabled is True


async def test_first_run_shows_the_setup_panel_and_the_rest_works(
    make_window: Any, memory_keyring: Any, fake_openai: FakeOpenAI
) -> None:
    window = await make_window(Settings(), api_key=None)
    assert window.stack.currentWidget() is window.setup_panel
    assert window.provider_label.text() == "No model set up"
    assert window.board.state("echo") == "available"  # the tool panel works without a provider
    window.setup_panel.button.click()
    dialog = window.settings_dialog
    assert dialog is not None and dialog.isVisible()
    page = dialog.provider_page
    page.preset.setCurrentIndex(page.preset.findData("custom"))
    page.base_url.setText(fake_openai.base_url)
    page.model.setEditText("fake-model")
    page.api_key.setText("sk-first-run")
    assert dialog.save()
    assert window.settings.provider.configured
    assert window.stack.currentWidget() is window.welcome
    assert window.provider_label.text().endswith("· fake-model")
    assert window.runtime is not None and window.runtime.settings.provider.model == "fake-model"
    assert window.runtime.api_key() == "sk-first-run"
    fake_openai.push(text_reply("hello there"))
    await window.controller.send("hi")
    await until(lambda: not window.composer.busy)
    assert window.chat.message_widget(window.chat.messages[-1]).plain_text().strip() == "hello there"
    assert fake_openai.headers[-1]["Authorization"] == "Bearer sk-first-run"
