"""Settings page "Model": provider preset, base URL, model list from the endpoint, API key in the
keyring (with the backend shown, and the session-only fallback explained), and Test connection."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import keyring
from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from weclaw_desktop import i18n
from weclaw_desktop.i18n import Text, tr
from weclaw_desktop.secrets import SecretStore, split_url_password, url_password_name
from weclaw_desktop.settings import Settings
from weclaw_desktop.ui import theme
from weclaw_desktop.ui.model_options import ModelOptions
from weclaw_desktop.ui.tasks import TaskSet

_BACKEND_NAMES = {
    "SecretService": "Secret Service (GNOME Keyring / KWallet)",
    "kwallet": "KWallet",
    "macOS": "macOS Keychain",
    "Windows": "Windows Credential Manager",
}


def keyring_backend_label() -> str:
    backend = keyring.get_keyring()
    module = type(backend).__module__
    for needle, label in _BACKEND_NAMES.items():
        if needle in module:
            return label
    return f"{module.removeprefix('keyring.backends.')}.{type(backend).__qualname__}"


def keyring_usable(store: SecretStore, name: str) -> bool:
    """Probe the keyring once (a read); the no-backend case shows up as ``store.persistent`` False."""
    from keyring.backends import fail

    if isinstance(keyring.get_keyring(), fail.Keyring):
        store.persistent = False
        return False
    store.get(name)
    return store.persistent


class ProviderPage(QWidget):
    def __init__(
        self,
        secrets: SecretStore,
        *,
        key_lookup: Callable[[], str | None] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        from weclaw_desktop.agent.presets import PRESETS

        self.secrets = secrets
        self._key_lookup = key_lookup
        self._presets = PRESETS
        self._tasks = TaskSet("settings")
        self._key_name = "api_key"
        self._had_key = False
        self.key_result = ""  # what the last save did with the key (tests read it)
        self._result: Text | None = None  # the last test/fetch outcome, re-rendered on a language change
        self._labels: dict[str, QLabel] = {}

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(12)
        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        form.setHorizontalSpacing(14)
        form.setVerticalSpacing(10)

        self.preset = QComboBox()
        for key, preset in PRESETS.items():
            self.preset.addItem(preset.label, key)
        self.preset.currentIndexChanged.connect(self._preset_changed)
        form.addRow(self._label("settings.preset"), self.preset)

        self.base_url = QLineEdit()
        self.base_url.setPlaceholderText("https://api.example.com/v1")
        form.addRow(self._label("settings.base_url"), self.base_url)

        model_row = QHBoxLayout()
        self.model = QComboBox()
        self.model.setEditable(True)
        self.model.setMinimumWidth(260)
        model_row.addWidget(self.model, 1)
        self.fetch = QPushButton()
        self.fetch.clicked.connect(lambda: self._run(self.fetch_models()))
        model_row.addWidget(self.fetch)
        form.addRow(self._label("settings.model"), model_row)

        key_row = QHBoxLayout()
        self.api_key = QLineEdit()
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        from weclaw_desktop.ui.settings_tools import add_reveal

        self.reveal_key = add_reveal(self.api_key)  # show/hide what was typed
        key_row.addWidget(self.api_key, 1)
        self.clear_key = QPushButton()
        self.clear_key.clicked.connect(self._clear_key)
        key_row.addWidget(self.clear_key)
        form.addRow(self._label("settings.api_key"), key_row)
        self.key_link = QLabel()
        self.key_link.setOpenExternalLinks(True)
        self.key_link.setObjectName("Muted")
        form.addRow("", self.key_link)
        self.backend = QLabel()
        self.backend.setObjectName("Muted")
        self.backend.setWordWrap(True)
        form.addRow("", self.backend)
        # thinking controls, capabilities and timeouts of the provider's profile (ui/model_options.py)
        self.options = ModelOptions(form, spawn=self._run, provider_factory=self._provider, parent=self)
        self.model.currentTextChanged.connect(lambda _t: self._context_changed())
        self.base_url.editingFinished.connect(self._context_changed)
        layout.addLayout(form)

        self.notice = QFrame()
        self.notice.setObjectName("Notice")
        notice_layout = QVBoxLayout(self.notice)
        notice_layout.setContentsMargins(12, 8, 12, 8)
        self.notice_text = QLabel()
        self.notice_text.setWordWrap(True)
        notice_layout.addWidget(self.notice_text)
        self.notice.setVisible(False)
        layout.addWidget(self.notice)

        test_row = QHBoxLayout()
        self.test = QPushButton()
        self.test.clicked.connect(lambda: self._run(self.test_connection()))
        test_row.addWidget(self.test)
        self.test_result = QLabel()
        self.test_result.setWordWrap(True)
        test_row.addWidget(self.test_result, 1)
        layout.addLayout(test_row)
        layout.addStretch(1)
        self.retranslate()

    def _label(self, key: str) -> QLabel:
        label = QLabel()
        self._labels[key] = label
        return label

    def retranslate(self) -> None:
        from weclaw_desktop.ui.settings_tools import reveal_text

        self.reveal_key.setToolTip(reveal_text(self.reveal_key.isChecked()))
        for key, label in self._labels.items():
            label.setText(tr(key))
        lang = i18n.language()
        for i in range(self.preset.count()):
            key = str(self.preset.itemData(i))
            preset = self._presets[key]
            self.preset.setItemText(i, tr("settings.custom") if key == "custom" else preset.short_label(lang))
        self.fetch.setText(tr("settings.fetch_models"))
        self.api_key.setPlaceholderText(
            tr("settings.api_key.stored") if self._had_key else tr("settings.api_key.placeholder")
        )
        self.clear_key.setText(tr("settings.api_key.clear"))
        self.notice_text.setText(tr("settings.keyring.none"))
        self.test.setText(tr("settings.test"))
        if self.backend.isVisibleTo(self) and self.backend.text():
            self.backend.setText(tr("settings.keyring.backend", backend=keyring_backend_label()))
        if self._result is not None:
            self.test_result.setText(str(self._result))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    # --- load / apply ---------------------------------------------------------------------------
    def load(self, settings: Settings) -> None:
        p = settings.provider
        self._key_name = p.api_key_name
        index = self.preset.findData(p.preset or ("custom" if p.base_url else "openai"))
        self.preset.blockSignals(True)
        self.preset.setCurrentIndex(max(0, index))
        self.preset.blockSignals(False)
        self.base_url.setText(p.base_url or self._current_preset().base_url)
        self._fill_models(list(self._current_preset().known_models), p.model or self._current_preset().default_model)
        usable = keyring_usable(self.secrets, self._key_name)
        self._had_key = bool(self.secrets.get(self._key_name))
        self.api_key.clear()
        self.api_key.setPlaceholderText(
            tr("settings.api_key.stored") if self._had_key else tr("settings.api_key.placeholder")
        )
        self.clear_key.setEnabled(self._had_key)
        self.show_backend(usable)
        self._update_key_link()
        self.options.load(settings)

    def show_backend(self, usable: bool) -> None:
        self.notice.setVisible(not usable)
        self.backend.setText(tr("settings.keyring.backend", backend=keyring_backend_label()) if usable else "")
        self.backend.setVisible(usable)

    def apply(self, settings: Settings) -> None:
        preset = str(self.preset.currentData() or "custom")
        settings.provider.preset = preset
        # a password in the URL goes to the keyring; settings.json and this field keep only user@host
        url, password = split_url_password(self.base_url.text().strip())
        if password:
            self.secrets.set(url_password_name(settings.provider.api_key_name), password)
            self.base_url.setText(url)
        settings.provider.base_url = url
        settings.provider.model = self.model.currentText().strip()
        self.options.apply(settings)
        key = self.api_key.text().strip()
        if key:
            persistent = self.secrets.set(settings.provider.api_key_name, key)
            self.key_result = "keyring" if persistent else "session"
            self.api_key.clear()
            self._had_key = True
            self.show_backend(persistent)

    # --- behaviour ------------------------------------------------------------------------------
    def _current_preset(self) -> Any:
        return self._presets.get(str(self.preset.currentData() or "custom")) or self._presets["custom"]

    def _preset_changed(self) -> None:
        preset = self._current_preset()
        if preset.key != "custom":
            self.base_url.setText(preset.base_url)
        self._fill_models(list(preset.known_models), preset.default_model)
        self._update_key_link()
        self._result = None
        self.test_result.clear()
        self._context_changed()

    def _context_changed(self) -> None:
        options = getattr(self, "options", None)
        if options is not None:
            options.set_context(
                str(self.preset.currentData() or ""), self.base_url.text().strip(), self.model.currentText().strip()
            )

    def _update_key_link(self) -> None:
        preset = self._current_preset()
        url = getattr(preset, "key_url", "")
        self.key_link.setText(f"<a href='{url}'>{url}</a>" if url else "")
        self.key_link.setVisible(bool(url))

    def _fill_models(self, models: list[str], current: str) -> None:
        self.model.clear()
        self.model.addItems(models)
        if current:
            index = self.model.findText(current)
            if index < 0:
                self.model.insertItem(0, current)
                index = 0
            self.model.setCurrentIndex(index)

    def _clear_key(self) -> None:
        self.secrets.delete(self._key_name)
        self._had_key = False
        self.api_key.clear()
        self.api_key.setPlaceholderText(tr("settings.api_key.placeholder"))
        self.clear_key.setEnabled(False)

    def _provider(self) -> Any:
        from weclaw_desktop.agent.provider import Provider, ProviderConfig

        key = (
            self.api_key.text().strip()
            or self.secrets.get(self._key_name)  # this configuration's own key (several are saved)
            or (self._key_lookup() if self._key_lookup is not None else self.secrets.api_key(self._key_name))
        )
        return Provider(
            ProviderConfig(
                base_url=self.base_url.text().strip(),
                model=self.model.currentText().strip(),
                api_key=key,
                preset=str(self.preset.currentData() or ""),
                timeout_s=20,
                max_retries=0,
            )
        )

    def _run(self, coro: Any) -> None:
        self._tasks.spawn(coro)

    def _show_result(self, text: Text, ok: bool) -> None:
        c = theme.colors()
        self.test_result.setStyleSheet(f"color:{c.success if ok else c.danger};")
        self._result = text
        self.test_result.setText(str(text))

    async def fetch_models(self) -> list[str]:
        if not self.base_url.text().strip():
            self._show_result(Text("settings.need_url"), False)
            return []
        provider = self._provider()
        self.fetch.setEnabled(False)
        current = self.model.currentText()
        try:
            models: list[str] = await provider.list_models()
        except Exception as exc:
            self._show_result(Text("settings.test_fail", message=getattr(exc, "message", str(exc))), False)
            return []
        finally:
            self.fetch.setEnabled(True)
            with contextlib.suppress(Exception):
                await provider.close()
        self._fill_models(models, current)
        self._show_result(Text("settings.models_fetched", n=len(models)), True)
        return models

    async def test_connection(self) -> bool:
        if not self.base_url.text().strip():
            self._show_result(Text("settings.need_url"), False)
            return False
        provider = self._provider()
        self.test.setEnabled(False)
        self.test_result.setStyleSheet("")
        self._result = Text("settings.testing")
        self.test_result.setText(str(self._result))
        try:
            models = await provider.list_models()
        except Exception as exc:
            self._show_result(Text("settings.test_fail", message=getattr(exc, "message", str(exc))), False)
            return False
        finally:
            self.test.setEnabled(True)
            with contextlib.suppress(Exception):
                await provider.close()
        if models and self.model.count() <= len(self._current_preset().known_models):
            self._fill_models(models, self.model.currentText())
        self._show_result(Text("settings.test_ok", n=len(models)), True)
        return True

    def cancel_tasks(self) -> None:
        self._tasks.cancel_pending()
