"""Settings > Tools: generated from each tool's Config model and keyring entries; saving keeps only overrides,
puts secrets in the keyring, and a bad value is refused with the tool's own message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import keyring
from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit, QSpinBox

from weclaw_desktop.i18n import set_language
from weclaw_desktop.secrets import SERVICE, SecretStore
from weclaw_desktop.settings import Settings, SettingsStore
from weclaw_desktop.toolkit.registry import ToolRegistry
from weclaw_desktop.ui.settings_dialog import SettingsDialog
from weclaw_desktop.ui.settings_tools import SecretField


def _dialog(qtbot: Any, registry: ToolRegistry | None = None, settings: Settings | None = None) -> SettingsDialog:
    set_language("en")
    dialog = SettingsDialog(SettingsStore(settings=settings or Settings()), SecretStore(), registry=registry)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.show_page("tools")
    return dialog


def test_email_can_be_set_up_in_the_gui(qtbot: Any, memory_keyring: Any) -> None:
    """What must work: the SMTP server, port, security and password are on the page, the password goes to the
    keyring (never settings.json), and only values that differ from tools.json are saved."""
    dialog = _dialog(qtbot)
    section = dialog.tools_page.show_section("email")
    assert section is not None and section.isVisible()
    email = dialog.tools_page.sections["email"]
    host = email.fields["host"][1].widget
    port = email.fields["port"][1].widget
    security = email.fields["security"][1].widget
    assert isinstance(host, QLineEdit) and isinstance(port, QSpinBox) and isinstance(security, QComboBox)
    assert [security.itemData(i) for i in range(security.count())] == ["starttls", "tls", "none"]
    assert email.fields["host"][2].text() == "SMTP server"
    assert "smtp.qq.com" in email.fields["host"][3].text()  # the field's description is the hint
    password = email.secret_fields["email.password"][0]
    assert isinstance(password, SecretField) and password.edit.echoMode() == QLineEdit.EchoMode.Password
    password.toggle.click()
    assert password.edit.echoMode() == QLineEdit.EchoMode.Normal and password.toggle.text() == "Hide"
    host.setText("smtp.example.cn")
    port.setValue(465)
    security.setCurrentIndex(security.findData("tls"))
    email.fields["username"][1].widget.setText("me@example.cn")  # type: ignore[attr-defined]
    password.edit.setText("app-password-1")
    assert dialog.save(), dialog.message.text()
    saved = SettingsStore.open().settings
    assert saved.tools.config["email"] == {
        "host": "smtp.example.cn",
        "port": 465,
        "security": "tls",
        "username": "me@example.cn",
    }
    assert keyring.get_password(SERVICE, "email.password") == "app-password-1"
    from weclaw_desktop.paths import app_paths

    assert "app-password-1" not in app_paths().settings_file.read_text(encoding="utf-8")
    # web search keys and fetch options are there too
    web = dialog.tools_page.sections["web"]
    assert set(web.secret_fields) == {"web.brave_api_key", "web.tavily_api_key"}
    assert isinstance(web.fields["allow_private"][1].widget, QCheckBox)


def test_a_bad_value_is_refused_with_the_tools_own_message(qtbot: Any, memory_keyring: Any) -> None:
    dialog = _dialog(qtbot)
    web = dialog.tools_page.sections["web"]
    web.fields["user_agent"][1].widget.setText("")  # type: ignore[attr-defined]
    web.fields["max_bytes"][1].widget.setValue(1000)  # type: ignore[attr-defined]
    email = dialog.tools_page.sections["email"]
    email.fields["sender"][1].widget.setText("x")  # type: ignore[attr-defined]
    assert dialog.save()  # all valid
    dialog2 = _dialog(qtbot)
    dialog2.tools_page.sections["email"].fields["timeout_s"][1].widget.setValue(0)  # type: ignore[attr-defined]
    assert not dialog2.save()
    assert "Email" in dialog2.message.text() and "timeout_s" in dialog2.message.text()
    assert SettingsStore.open().settings.tools.config["email"] == {"sender": "x"}  # the bad save wrote nothing


def test_a_new_tool_with_a_config_gets_its_settings_without_ui_code(
    qtbot: Any, tmp_path: Path, memory_keyring: Any
) -> None:
    """The sample Echo tool (tests/sample_tools.py) has a Config with one field and a keyring entry in its
    requires: the page shows both, generated."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from helpers import base_manifest

    data = base_manifest()
    data["tools"]["echo"]["requires"] = {"secret": "echo.key"}
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    dialog = _dialog(qtbot, registry=ToolRegistry.from_path(path))
    echo = dialog.tools_page.sections["echo"]
    assert list(echo.fields) == ["prefix"] and list(echo.secret_fields) == ["echo.key"]
    echo.fields["prefix"][1].widget.setText(">> ")  # type: ignore[attr-defined]
    assert dialog.save()
    assert SettingsStore.open().settings.tools.config["echo"] == {"prefix": ">> "}
    # tools without settings have no section
    assert all(s.fields or s.secret_fields or s.error for s in dialog.tools_page.sections.values() if s.isVisible())


def test_the_deny_list_and_profile_are_edited_on_the_tools_page(qtbot: Any, memory_keyring: Any) -> None:
    dialog = _dialog(qtbot)
    page = dialog.tools_page
    page.deny.setPlainText("shell\npython_runner")
    assert dialog.save()
    assert SettingsStore.open().settings.tools.policy.deny == ["shell", "python_runner"]
