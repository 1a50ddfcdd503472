"""The composer's pickers: the assistant of this chat, and the model that answers it (grouped by saved
provider configuration), with what the model can do shown next to it (tools, vision, reasoning)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMenu, QToolButton, QWidget

from weclaw_desktop.i18n import tr
from weclaw_desktop.ui import icons, theme


@dataclass(frozen=True)
class ModelChoice:
    provider: str
    model: str


@dataclass(frozen=True)
class ShownCaps:
    tools: bool | None = None
    vision: bool | None = None
    reasoning: bool | None = None


@dataclass(frozen=True)
class AssistantChoice:
    id: str
    name: str
    icon: str


class _Picker(QToolButton):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.setAutoRaise(True)
        self.setObjectName("ComposerPicker")
        self._menu = QMenu(self)
        self.setMenu(self._menu)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def retranslate(self) -> None:
        raise NotImplementedError


class ModelSwitcher(_Picker):
    """``chosen(provider, model)``: the user picked another model for this chat; ``settings_requested``."""

    chosen = Signal(str, str)
    settings_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.choices: list[ModelChoice] = []
        self.current: ModelChoice | None = None
        self.retranslate()

    def set_choices(self, choices: Sequence[ModelChoice], current: ModelChoice | None) -> None:
        self.choices = list(choices)
        self.current = current
        self.retranslate()

    def retranslate(self) -> None:
        menu = self._menu
        menu.clear()
        group = QActionGroup(menu)
        providers = list(dict.fromkeys(c.provider for c in self.choices))
        for provider in providers:
            if len(providers) > 1:
                menu.addSection(provider)
            for choice in (c for c in self.choices if c.provider == provider):
                action = QAction(choice.model, menu)
                action.setCheckable(True)
                action.setChecked(choice == self.current)
                action.triggered.connect(lambda _on=False, c=choice: self._pick(c))
                group.addAction(action)
                menu.addAction(action)
        if not self.choices:
            empty = menu.addAction(tr("composer.no_models"))
            empty.setEnabled(False)
        menu.addSeparator()
        menu.addAction(tr("composer.edit_models"), self.settings_requested.emit)
        if self.current is None:
            self.setText(tr("composer.no_model"))
        else:
            label = self.current.model
            if len(providers) > 1:
                label = f"{self.current.provider} · {label}"
            self.setText(label)
        icons.bind(self, "chip")  # re-drawn in the new palette on a live theme change
        self.setToolTip(tr("composer.model_tip"))

    def _pick(self, choice: ModelChoice) -> None:
        if choice != self.current:
            self.current = choice
            self.retranslate()
            self.chosen.emit(choice.provider, choice.model)


class CapsBadges(QWidget):
    """Small marks after the model: what it can do ("Tools", "Vision", "Reasoning"), and "No tools"."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.caps = ShownCaps()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        self.labels = {name: QLabel() for name in ("tools", "vision", "reasoning")}
        for label in self.labels.values():
            label.setObjectName("CapBadge")
            layout.addWidget(label)
        self.retranslate()

    def set_caps(self, caps: ShownCaps) -> None:
        self.caps = caps
        self.retranslate()

    def retranslate(self) -> None:
        c = theme.colors()
        tips = []
        for name, label in self.labels.items():
            value = getattr(self.caps, name)
            if value is None:
                label.hide()
                tips.append(tr(f"caps.{name}.unknown"))
                continue
            label.show()
            if value:
                label.setText(tr(f"caps.{name}"))
                label.setStyleSheet(f"color:{c.muted}; border:1px solid {c.border}; border-radius:6px; padding:0 4px;")
                tips.append(tr(f"caps.{name}.yes"))
            elif name == "tools":  # a model without tools matters: it can answer but not act
                label.setText(tr("caps.tools.no_short"))
                label.setStyleSheet(
                    f"color:{c.warning}; border:1px solid {c.warning}; border-radius:6px; padding:0 4px;"
                )
                tips.append(tr("caps.tools.no"))
            else:
                label.hide()
                tips.append(tr(f"caps.{name}.no"))
        self.setToolTip("\n".join(tips))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)


class AssistantPicker(_Picker):
    """``chosen(assistant_id)``, ``instructions_requested`` (this chat's custom instructions),
    ``settings_requested`` (edit the assistants)."""

    chosen = Signal(str)
    instructions_requested = Signal()
    settings_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.assistants: list[AssistantChoice] = []
        self.current = ""
        self.has_instructions = False
        self.retranslate()

    def set_assistants(self, assistants: Sequence[AssistantChoice], current: str, *, instructions: bool) -> None:
        self.assistants = list(assistants)
        self.current = current
        self.has_instructions = instructions
        self.retranslate()

    def retranslate(self) -> None:
        menu = self._menu
        menu.clear()
        menu.addSection(tr("composer.assistant"))
        group = QActionGroup(menu)
        for a in self.assistants:
            action = QAction(f"{a.icon}  {a.name}", menu)
            action.setCheckable(True)
            action.setChecked(a.id == self.current)
            action.triggered.connect(lambda _on=False, aid=a.id: self._pick(aid))
            group.addAction(action)
            menu.addAction(action)
        menu.addSeparator()
        mark = " ✓" if self.has_instructions else ""
        menu.addAction(tr("composer.instructions") + mark, self.instructions_requested.emit)
        menu.addAction(tr("composer.edit_assistants"), self.settings_requested.emit)
        shown = next((a for a in self.assistants if a.id == self.current), None)
        self.setText(f"{shown.icon} {shown.name}" if shown else "…")
        self.setToolTip(tr("composer.assistant_tip"))

    def _pick(self, assistant_id: str) -> None:
        if assistant_id != self.current:
            self.current = assistant_id
            self.retranslate()
            self.chosen.emit(assistant_id)
