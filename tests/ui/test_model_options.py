"""Settings > Model: the profile's thinking controls, per-model capabilities and the timeouts, saved and shown.

What must survive: the thinking effort offers exactly the provider's levels (none where it has no effort setting);
"Off" cannot be chosen where the provider cannot switch thinking off; a capability the user sets is saved per
model and survives switching models in the dialog; half-checked (not set) saves nothing; the endpoint's answer is
shown with where each value came from; the timeouts are saved.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "providers"))

from aiohttp import web
from provider_servers import RuleServer
from PySide6.QtCore import Qt

from weclaw_desktop.i18n import set_language
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import ModelCapabilitySettings, Settings, SettingsStore
from weclaw_desktop.ui.settings_dialog import SettingsDialog


def _dialog(qtbot: Any, settings: Settings) -> Any:
    set_language("en")
    dialog = SettingsDialog(SettingsStore(settings=settings), SecretStore())
    qtbot.addWidget(dialog)
    return dialog


def _levels(page: Any) -> list[str]:
    combo = page.options.effort
    return [str(combo.itemData(i)) for i in range(combo.count())]


def test_controls_follow_the_profile_and_save(qtbot: Any, memory_keyring: Any) -> None:
    s = Settings()
    s.provider.preset, s.provider.base_url, s.provider.model = (
        "deepseek",
        "https://api.deepseek.com/v1",
        "deepseek-flash",
    )
    s.provider.capabilities = {"deepseek-flash": ModelCapabilitySettings(vision=False)}
    dialog = _dialog(qtbot, s)
    page, opts = dialog.provider_page, dialog.provider_page.options
    assert _levels(page) == ["", "low", "high", "max"] and opts.effort.isEnabled()
    assert opts.vision.checkState() == Qt.CheckState.Unchecked
    assert opts.tools.checkState() == Qt.CheckState.PartiallyChecked
    opts.thinking.setCurrentIndex(opts.thinking.findData("off"))
    opts.effort.setCurrentIndex(opts.effort.findData("high"))
    opts.tools.setCheckState(Qt.CheckState.Unchecked)
    opts.first_token.setValue(30)

    page.model.setCurrentText("deepseek-v4-pro")  # another model: its own boxes, the first one's kept
    assert opts.tools.checkState() == Qt.CheckState.PartiallyChecked
    opts.reasoning.setCheckState(Qt.CheckState.Checked)
    page.model.setCurrentText("deepseek-flash")
    assert opts.tools.checkState() == Qt.CheckState.Unchecked
    assert dialog.save()
    saved = SettingsStore.open().settings
    p = saved.provider
    assert (p.thinking, p.reasoning_effort, p.first_token_timeout_s) == ("off", "high", 30)
    assert p.capabilities["deepseek-flash"] == ModelCapabilitySettings(tools=False, vision=False)
    assert p.capabilities["deepseek-v4-pro"] == ModelCapabilitySettings(reasoning=True)

    page.preset.setCurrentIndex(page.preset.findData("gemini"))
    off = opts.thinking.model().item(2)
    assert not off.isEnabled() and opts.thinking.currentData() != "off"
    assert "no documented way to switch thinking off" in opts.thinking_note.text()
    page.preset.setCurrentIndex(page.preset.findData("qwen"))
    assert _levels(page) == [""] and not opts.effort.isEnabled()


async def test_ask_the_endpoint_shows_values_and_sources(qtbot: Any, memory_keyring: Any) -> None:
    server = RuleServer()

    async def show(request: web.Request) -> web.Response:
        return web.json_response({"capabilities": ["completion", "tools"], "model_info": {"x.context_length": 32768}})

    server.extra_routes.append(("POST", "/api/show", show))
    await server.start()
    try:
        s = Settings()
        s.provider.preset, s.provider.base_url, s.provider.model = "ollama", server.base_url, "qwen3:8b"
        dialog = _dialog(qtbot, s)
        opts = dialog.provider_page.options
        opts.vision.setCheckState(Qt.CheckState.Checked)
        known = await opts.ask_endpoint()
    finally:
        await server.stop()
    assert known == (
        "Known: tools yes (endpoint), images yes (you), thinking no (endpoint), context 32,768 tokens (endpoint)"
    )
    assert opts.known.text() == known
