"""The reasoning-model part of the Settings "Model" page: thinking controls, model capabilities, timeouts.

What it offers follows the provider profile (``resources/providers.toml``): the thinking switch only where the
provider documents one (Off is disabled where it cannot be switched off), the effort levels the provider accepts.
Capabilities are tri-state per model: checked / unchecked is what the user says, half-checked leaves it to the
endpoint's report or the profile; "Ask the endpoint" shows what is known and from where.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QWidget,
)

from weclaw_desktop.agent.presets import get_preset
from weclaw_desktop.agent.provider.profiles import Profile, profile_for
from weclaw_desktop.i18n import language, tr
from weclaw_desktop.settings import ModelCapabilitySettings, Settings

_TRI = {None: Qt.CheckState.PartiallyChecked, True: Qt.CheckState.Checked, False: Qt.CheckState.Unchecked}


FIELD_GAP = 6  # px between a label and its field
GROUP_GAP = 16  # px between two label+field pairs on one row


class ModelOptions(QWidget):
    """Rows added to a form: :meth:`load`, :meth:`set_context` when the preset/URL/model changes, :meth:`apply`."""

    def __init__(
        self,
        form: QFormLayout,
        *,
        spawn: Callable[[Coroutine[Any, Any, Any]], Any],
        provider_factory: Callable[[], Any],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._spawn = spawn
        self._provider_factory = provider_factory
        self._labels: dict[str, QLabel] = {}
        self._profile: Profile = profile_for("", "")
        self._model = ""
        self._caps: dict[str, ModelCapabilitySettings] = {}
        self._known = ""  # the last "Ask the endpoint" answer, as shown

        self.thinking = QComboBox()
        for mode in ("default", "on", "off"):
            self.thinking.addItem("", mode)
        self.effort = QComboBox()
        thinking_row = QHBoxLayout()
        thinking_row.setSpacing(FIELD_GAP)
        thinking_row.addWidget(self.thinking, 1)
        thinking_row.addSpacing(GROUP_GAP)
        thinking_row.addWidget(self._label("settings.effort"))
        thinking_row.addWidget(self.effort, 1)
        form.addRow(self._label("settings.thinking"), thinking_row)
        self.thinking_note = QLabel()
        self.thinking_note.setObjectName("Muted")
        self.thinking_note.setWordWrap(True)
        form.addRow("", self.thinking_note)

        caps_row = QHBoxLayout()
        caps_row.setSpacing(GROUP_GAP)  # check boxes and the context field are separate choices
        self.tools = self._tri()
        self.vision = self._tri()
        self.reasoning = self._tri()
        for box in (self.tools, self.vision, self.reasoning):
            caps_row.addWidget(box)
        context_pair = QHBoxLayout()
        context_pair.setSpacing(FIELD_GAP)
        context_pair.addWidget(self._label("settings.caps.context"))
        self.context = QSpinBox()
        self.context.setRange(0, 10_000_000)
        self.context.setSingleStep(1024)
        self.context.setMinimumWidth(self.context.fontMetrics().horizontalAdvance("10,000,000") + 40)
        context_pair.addWidget(self.context)
        caps_row.addLayout(context_pair)
        caps_row.addStretch(1)
        form.addRow(self._label("settings.caps"), caps_row)
        known_row = QHBoxLayout()
        self.known = QLabel()
        self.known.setObjectName("Muted")
        self.known.setWordWrap(True)
        known_row.addWidget(self.known, 1)
        self.check = QPushButton()
        self.check.clicked.connect(lambda: self._spawn(self.ask_endpoint()))
        known_row.addWidget(self.check)
        form.addRow("", known_row)

        timeout_row = QHBoxLayout()
        timeout_row.setSpacing(FIELD_GAP)
        self.first_token = self._seconds(1, 3600)
        self.idle = self._seconds(1, 3600)
        timeout_row.addWidget(self._label("settings.first_token"))
        timeout_row.addWidget(self.first_token)
        timeout_row.addSpacing(GROUP_GAP)
        timeout_row.addWidget(self._label("settings.idle"))
        timeout_row.addWidget(self.idle)
        timeout_row.addStretch(1)
        form.addRow(self._label("settings.timeouts"), timeout_row)
        self.retranslate()

    # --- building ----------------------------------------------------------------------------------
    def _label(self, key: str) -> QLabel:
        label = QLabel()
        self._labels[key] = label
        return label

    @staticmethod
    def _tri() -> QCheckBox:
        box = QCheckBox()
        box.setTristate(True)
        box.setCheckState(Qt.CheckState.PartiallyChecked)
        return box

    @staticmethod
    def _seconds(low: float, high: float) -> QDoubleSpinBox:
        spin = QDoubleSpinBox()
        spin.setRange(low, high)
        spin.setDecimals(0)
        spin.setSingleStep(5)
        return spin

    def retranslate(self) -> None:
        for key, label in self._labels.items():
            label.setText(tr(key))
        for i, mode in enumerate(("default", "on", "off")):
            self.thinking.setItemText(i, tr(f"settings.thinking.{mode}"))
        for i in range(self.effort.count()):
            level = str(self.effort.itemData(i) or "")
            self.effort.setItemText(i, tr(f"settings.effort.{level}") if level else tr("settings.effort.default"))
        self.tools.setText(tr("settings.caps.tools"))
        self.vision.setText(tr("settings.caps.vision"))
        self.reasoning.setText(tr("settings.caps.reasoning"))
        for box in (self.tools, self.vision, self.reasoning):
            box.setToolTip(tr("settings.caps.tip"))
        self.context.setSpecialValueText(tr("settings.caps.context.unset"))
        self.check.setText(tr("settings.caps.check"))
        unit = " s"
        self.first_token.setSuffix(unit)
        self.idle.setSuffix(unit)
        for spin in (self.first_token, self.idle):
            spin.setToolTip(tr("settings.timeouts.tip"))
        self._update_notes()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    # --- load / context / apply ----------------------------------------------------------------------
    def load(self, settings: Settings) -> None:
        p = settings.provider
        self._caps = {name: c.model_copy() for name, c in p.capabilities.items()}
        self._model = ""  # the boxes show nothing of the settings yet: do not store them over the loaded values
        self.first_token.setValue(p.first_token_timeout_s)
        self.idle.setValue(p.idle_timeout_s)
        self.set_context(p.preset, p.base_url, p.model)
        self.thinking.setCurrentIndex(max(0, self.thinking.findData(p.thinking)))
        self.effort.setCurrentIndex(max(0, self.effort.findData(p.reasoning_effort)))

    def set_context(self, preset: str, base_url: str, model: str) -> None:
        """The provider or model changed: offer that profile's controls, show that model's capabilities."""
        self._store_caps()
        self._profile = profile_for(preset, base_url)
        self._model = model
        self._known = ""
        controls = self._profile.thinking
        keep = str(self.effort.currentData() or "")
        self.effort.blockSignals(True)
        self.effort.clear()
        self.effort.addItem("", "")
        for level in controls.efforts:
            self.effort.addItem("", level)
        self.effort.setCurrentIndex(max(0, self.effort.findData(keep)))
        self.effort.setEnabled(bool(controls.effort_path))
        self.effort.blockSignals(False)
        off = self.thinking.model().item(2)  # type: ignore[attr-defined]
        off.setEnabled(controls.can_disable)
        if not controls.can_disable and self.thinking.currentIndex() == 2:
            self.thinking.setCurrentIndex(0)
        user = self._caps.get(model, ModelCapabilitySettings())
        self.tools.setCheckState(_TRI[user.tools])
        self.vision.setCheckState(_TRI[user.vision])
        self.reasoning.setCheckState(_TRI[user.reasoning])
        self.context.setValue(user.context or 0)
        self.retranslate()

    def _store_caps(self) -> None:
        if not self._model:
            return
        value = ModelCapabilitySettings(
            tools=_value(self.tools),
            vision=_value(self.vision),
            reasoning=_value(self.reasoning),
            context=self.context.value() or None,
        )
        if value == ModelCapabilitySettings():
            self._caps.pop(self._model, None)
        else:
            self._caps[self._model] = value

    def apply(self, settings: Settings) -> None:
        self._store_caps()
        p = settings.provider
        p.thinking = str(self.thinking.currentData() or "default")  # type: ignore[assignment]
        p.reasoning_effort = str(self.effort.currentData() or "") if self.effort.isEnabled() else ""
        p.capabilities = dict(self._caps)
        p.first_token_timeout_s = self.first_token.value()
        p.idle_timeout_s = self.idle.value()

    # --- what the endpoint says ---------------------------------------------------------------------
    def _update_notes(self) -> None:
        controls = self._profile.thinking
        key = self._profile.key
        name = tr("settings.custom") if key == "custom" else get_preset(key).short_label(language())
        notes = []
        if not controls.can_disable:
            notes.append(tr("settings.thinking.cannot_off", provider=name))
        if not controls.effort_path:
            notes.append(tr("settings.effort.not_tunable", provider=name))
        self.thinking_note.setText(" ".join(notes))
        self.thinking_note.setVisible(bool(notes))
        self.known.setText(self._known)
        self.known.setVisible(bool(self._known))

    async def ask_endpoint(self) -> str:
        """Resolve the current model's capabilities (endpoint, profile, user) and show them with their sources."""
        self._store_caps()
        from weclaw_desktop.agent.provider import Capabilities

        provider = self._provider_factory()
        provider.config.capabilities = {name: Capabilities(**c.model_dump()) for name, c in self._caps.items()}
        self.check.setEnabled(False)
        try:
            caps = await provider.capabilities(self._model)
        finally:
            self.check.setEnabled(True)
            await provider.close()

        def yes_no(name: str) -> str:
            value = getattr(caps.caps, name)
            source = tr(f"settings.caps.source.{caps.source(name)}")
            if value is None:
                return tr("settings.caps.unknown")
            return tr("settings.caps.yes" if value else "settings.caps.no", source=source)

        context = caps.caps.context
        self._known = tr(
            "settings.caps.known",
            tools=yes_no("tools"),
            vision=yes_no("vision"),
            reasoning=yes_no("reasoning"),
            context=tr("settings.caps.tokens", n=context, source=tr(f"settings.caps.source.{caps.source('context')}"))
            if context
            else tr("settings.caps.unknown"),
        )
        self._update_notes()
        return self._known


def _value(box: QCheckBox) -> bool | None:
    state = box.checkState()
    if state == Qt.CheckState.PartiallyChecked:
        return None
    return state == Qt.CheckState.Checked
