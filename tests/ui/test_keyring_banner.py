"""Without a system keyring: the main window says so with what to install, and a key typed in Settings is
kept for the session — also across a live language change. Secret fields can be shown and hidden."""

from __future__ import annotations

import asyncio
from typing import Any

from fakeopenai import FakeOpenAI
from PySide6.QtWidgets import QApplication, QLineEdit
from uihelpers import configured_settings, until

from weclaw_desktop.settings import Settings
from weclaw_desktop.ui.translation import install_translations


async def test_no_keyring_banner_and_the_key_survives_a_language_change(
    make_window: Any, fake_openai: FakeOpenAI, no_keyring: None
) -> None:
    window = await make_window(configured_settings(fake_openai), api_key=None)
    install_translations(QApplication.instance())
    window._spawn(window.check_keyring())
    await until(lambda: window.keyring_banner.isVisible(), what="banner")
    assert "No system keyring" in window.keyring_banner.text.text()
    assert "gnome-keyring" in window.keyring_banner.text.text()  # what to install (this is Linux)
    dialog = window.open_settings()
    page = dialog.provider_page
    page.api_key.setText("sk-session-only-77")
    assert page.api_key.echoMode() == QLineEdit.EchoMode.Password
    page.reveal_key.trigger()
    assert page.api_key.echoMode() == QLineEdit.EchoMode.Normal
    page.reveal_key.trigger()
    assert dialog.save()
    assert page.key_result == "session"
    await until(lambda: window.runtime.api_key() == "sk-session-only-77", what="key in use")

    def chinese(s: Settings) -> None:
        s.ui.language = "zh"

    window.store.update(chinese)  # Settings > Appearance > 简体中文, applied live
    await asyncio.sleep(0.1)
    assert "没有可用的系统钥匙串" in window.keyring_banner.text.text()
    assert window.runtime.api_key() == "sk-session-only-77"  # still there after the switch
    dialog = window.open_settings()
    assert dialog.provider_page.api_key.placeholderText() != ""  # shows that a key is stored
    assert window.secrets.get("api_key") == "sk-session-only-77"

    def english(s: Settings) -> None:
        s.ui.language = "en"

    window.store.update(english)
    await asyncio.sleep(0.05)
    window.keyring_banner.dismiss.click()
    assert not window.keyring_banner.isVisible()
