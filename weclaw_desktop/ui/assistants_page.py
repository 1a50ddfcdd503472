"""Settings page "Assistants": personas a chat starts from. Each has a name and icon, a system prompt (added to
WeClaw's own), a default provider and model, the tools it may use (every tool you allow / only the ticked ones /
none: the loop enforces it) and generation settings (temperature, top p, maximum answer length). One is the
default for new chats; there is always at least one."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from weclaw_desktop import i18n
from weclaw_desktop.i18n import tr
from weclaw_desktop.settings import Settings
from weclaw_desktop.settings.conversation import AssistantSettings, GenerationSettings, new_assistant_id
from weclaw_desktop.toolkit.registry import ToolRegistry
from weclaw_desktop.ui.translation import mark_content

TOOL_MODES = ("all", "only", "none")


class _Optional(QWidget):
    """A checkbox that switches a number on (sent) or off (the endpoint's default)."""

    def __init__(self, spin: QSpinBox | QDoubleSpinBox, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.box = QCheckBox()
        self.spin = spin
        spin.setEnabled(False)
        self.box.toggled.connect(spin.setEnabled)
        layout.addWidget(self.box)
        layout.addWidget(spin)
        layout.addStretch(1)

    def value(self) -> float | None:
        return float(self.spin.value()) if self.box.isChecked() else None

    def set_value(self, value: float | None) -> None:
        self.box.setChecked(value is not None)
        if value is not None:
            self.spin.setValue(value)  # type: ignore[arg-type]


class AssistantsPage(QWidget):
    def __init__(self, registry: ToolRegistry | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.registry = registry
        self.entries: list[AssistantSettings] = []
        self.default = ""
        self.provider_models: dict[str, list[str]] = {}
        self._current = -1
        root = QHBoxLayout(self)
        root.setContentsMargins(0, 0, 0, 0)
        root.setSpacing(12)
        left = QVBoxLayout()
        self.list = QListWidget()
        mark_content(self.list)  # assistant names are the user's
        self.list.setObjectName("AssistantList")
        self.list.setFixedWidth(180)
        self.list.currentRowChanged.connect(self._select)
        left.addWidget(self.list, 1)
        buttons = QHBoxLayout()
        self.add_button = QPushButton()
        self.add_button.clicked.connect(self.add)
        self.copy_button = QPushButton()
        self.copy_button.clicked.connect(self.duplicate)
        self.delete_button = QPushButton()
        self.delete_button.clicked.connect(self.delete)
        for b in (self.add_button, self.copy_button, self.delete_button):
            buttons.addWidget(b)
        left.addLayout(buttons)
        root.addLayout(left)

        form = QFormLayout()
        form.setVerticalSpacing(8)
        self.labels: dict[str, QLabel] = {}

        def row(key: str, widget: QWidget) -> None:
            label = QLabel()
            self.labels[key] = label
            form.addRow(label, widget)

        name_row = QHBoxLayout()
        self.icon = QLineEdit()
        self.icon.setMaxLength(8)
        self.icon.setMinimumWidth(self.icon.minimumSizeHint().width())  # the theme's padding decides
        self.icon.setMaximumWidth(72)
        self.icon.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.name = QLineEdit()
        self.name.setMaxLength(60)
        self.name.textEdited.connect(self._rename_current)
        self.icon.textEdited.connect(self._rename_current)
        name_row.addWidget(self.icon)
        name_row.addWidget(self.name, 1)
        row("name", _wrap(name_row))
        self.is_default = QCheckBox()
        row("default", self.is_default)
        self.prompt = QPlainTextEdit()
        self.prompt.setMinimumHeight(90)
        row("prompt", self.prompt)
        self.provider = QComboBox()
        mark_content(self.provider)  # configuration names are the user's
        self.provider.currentIndexChanged.connect(self._fill_models)
        row("provider", self.provider)
        self.model = QComboBox()
        self.model.setEditable(True)
        row("model", self.model)
        self.tool_mode = QComboBox()
        self.tool_mode.currentIndexChanged.connect(self._tool_mode_changed)
        row("tools", self.tool_mode)
        self.tools = QListWidget()
        self.tools.setMaximumHeight(130)
        form.addRow("", self.tools)
        temp = QDoubleSpinBox()
        temp.setRange(0, 2)
        temp.setSingleStep(0.1)
        temp.setValue(0.7)
        self.temperature = _Optional(temp)
        row("temperature", self.temperature)
        top = QDoubleSpinBox()
        top.setRange(0.01, 1)
        top.setSingleStep(0.05)
        top.setValue(1.0)
        self.top_p = _Optional(top)
        row("top_p", self.top_p)
        tokens = QSpinBox()
        tokens.setRange(1, 1_000_000)
        tokens.setValue(4096)
        self.max_tokens = _Optional(tokens)
        row("max_tokens", self.max_tokens)
        root.addLayout(form, 1)
        self.retranslate()

    # --- texts --------------------------------------------------------------------------------------
    def retranslate(self) -> None:
        for key, label in self.labels.items():
            label.setText(tr(f"assistants.{key}"))
        self.add_button.setText(tr("assistants.add"))
        self.copy_button.setText(tr("assistants.duplicate"))
        self.delete_button.setText(tr("assistants.delete"))
        self.is_default.setText(tr("assistants.is_default"))
        self.prompt.setPlaceholderText(tr("assistants.prompt.placeholder"))
        self.name.setPlaceholderText(tr("assistants.name.placeholder"))
        self.temperature.box.setText(tr("assistants.set"))
        self.top_p.box.setText(tr("assistants.set"))
        self.max_tokens.box.setText(tr("assistants.set"))
        mode = self.tool_mode.currentIndex()
        self.tool_mode.blockSignals(True)
        self.tool_mode.clear()
        for m in TOOL_MODES:
            self.tool_mode.addItem(tr(f"assistants.tools.{m}"), m)
        self.tool_mode.setCurrentIndex(max(0, mode))
        self.tool_mode.blockSignals(False)
        if self.provider.count():
            self.provider.setItemText(0, tr("assistants.provider.active"))
        if self.model.count() and self.model.itemData(0) == "":
            self.model.setItemText(0, tr("assistants.model.provider"))
        lang = i18n.language()
        for i in range(self.tools.count()):
            item = self.tools.item(i)
            tool = str(item.data(Qt.ItemDataRole.UserRole))
            item.setText(self._tool_label(tool, lang))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def _tool_label(self, tool: str, lang: str) -> str:
        if self.registry is None:
            return tool
        try:
            return f"{self.registry.spec(tool).display.name.get(lang)} ({tool})"
        except KeyError:
            return tool

    # --- load / apply ----------------------------------------------------------------------------------
    def load(self, settings: Settings) -> None:
        self.entries = [a.model_copy(deep=True) for a in settings.assistants.entries]
        self.default = settings.assistants.current.id
        self.provider_models = {p.name: p.model_choices() for p in settings.providers.entries}
        self.provider.blockSignals(True)
        self.provider.clear()
        self.provider.addItem(tr("assistants.provider.active"), "")
        for name in self.provider_models:
            self.provider.addItem(name, name)
        self.provider.blockSignals(False)
        self.tools.clear()
        names = self.registry.tool_names(include_disabled=True) if self.registry is not None else []
        lang = i18n.language()
        for tool in names:
            item = QListWidgetItem(self._tool_label(tool, lang))
            item.setData(Qt.ItemDataRole.UserRole, tool)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked)
            self.tools.addItem(item)
        self._current = -1
        self._fill_list()
        self.list.setCurrentRow(0)

    def apply(self, settings: Settings) -> None:
        self._commit()
        settings.assistants.entries = [a.model_copy(deep=True) for a in self.entries]
        settings.assistants.default = self.default if any(a.id == self.default for a in self.entries) else ""

    # --- list ---------------------------------------------------------------------------------------------
    def _fill_list(self) -> None:
        self.list.blockSignals(True)
        row = self.list.currentRow()
        self.list.clear()
        for a in self.entries:
            mark = "  ★" if a.id == self.default else ""
            self.list.addItem(f"{a.icon}  {a.name}{mark}")
        self.list.setCurrentRow(min(max(row, 0), len(self.entries) - 1))
        self.list.blockSignals(False)
        self.delete_button.setEnabled(len(self.entries) > 1)

    def _select(self, row: int) -> None:
        self._commit()
        self._current = row
        if 0 <= row < len(self.entries):
            self._show(self.entries[row])

    def add(self) -> None:
        self._commit()
        name = tr("assistants.new_name")
        taken = {a.id for a in self.entries}
        self.entries.append(AssistantSettings(id=new_assistant_id(name, taken), name=name, icon="💬"))
        self._current = -1
        self._fill_list()
        self.list.setCurrentRow(len(self.entries) - 1)
        self._select(len(self.entries) - 1)
        self.name.setFocus()
        self.name.selectAll()

    def duplicate(self) -> None:
        self._commit()
        if not 0 <= self._current < len(self.entries):
            return
        source = self.entries[self._current]
        name = tr("assistants.copy_name", name=source.name)[:60]
        copy = source.model_copy(deep=True, update={"id": new_assistant_id(source.id, {a.id for a in self.entries})})
        copy.name = name
        self.entries.append(copy)
        self._current = -1
        self._fill_list()
        self.list.setCurrentRow(len(self.entries) - 1)
        self._select(len(self.entries) - 1)

    def delete(self) -> None:
        if len(self.entries) <= 1 or not 0 <= self._current < len(self.entries):
            return
        gone = self.entries.pop(self._current)
        if gone.id == self.default:
            self.default = self.entries[0].id
        self._current = -1
        self._fill_list()
        self._select(self.list.currentRow())

    def _rename_current(self) -> None:
        item = self.list.currentItem()
        if item is not None and 0 <= self._current < len(self.entries):
            mark = "  ★" if self.entries[self._current].id == self.default else ""
            item.setText(f"{self.icon.text() or '💬'}  {self.name.text()}{mark}")

    # --- editor -----------------------------------------------------------------------------------------
    def _show(self, a: AssistantSettings) -> None:
        self.name.setText(a.name)
        self.icon.setText(a.icon)
        self.prompt.setPlainText(a.system_prompt)
        self.is_default.setChecked(a.id == self.default)
        index = self.provider.findData(a.provider)
        self.provider.setCurrentIndex(max(0, index))
        self._fill_models()
        if a.model:
            i = self.model.findText(a.model)
            if i < 0:
                self.model.addItem(a.model, a.model)
                i = self.model.count() - 1
            self.model.setCurrentIndex(i)
        else:
            self.model.setCurrentIndex(0)
        mode = "all" if a.tools is None else ("none" if not a.tools else "only")
        self.tool_mode.setCurrentIndex(TOOL_MODES.index(mode))
        chosen = set(a.tools or [])
        for i in range(self.tools.count()):
            item = self.tools.item(i)
            on = str(item.data(Qt.ItemDataRole.UserRole)) in chosen
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
        self._tool_mode_changed()
        g = a.generation
        self.temperature.set_value(g.temperature)
        self.top_p.set_value(g.top_p)
        self.max_tokens.set_value(g.max_tokens)

    def _fill_models(self) -> None:
        provider = str(self.provider.currentData() or "")
        models = self.provider_models.get(provider) or sorted({m for ms in self.provider_models.values() for m in ms})
        current = self.model.currentText() if self.model.currentIndex() > 0 else ""
        self.model.clear()
        self.model.addItem(tr("assistants.model.provider"), "")
        for m in models:
            self.model.addItem(m, m)
        if current:
            i = self.model.findText(current)
            self.model.setCurrentIndex(i if i >= 0 else 0)

    def _tool_mode_changed(self) -> None:
        self.tools.setVisible(self.tool_mode.currentData() == "only")

    def _commit(self) -> None:
        """The editor's values into the assistant being edited."""
        if not 0 <= self._current < len(self.entries):
            return
        a = self.entries[self._current]
        a.name = self.name.text().strip()[:60] or a.name
        a.icon = self.icon.text().strip()[:8] or "💬"
        a.system_prompt = self.prompt.toPlainText().strip()
        a.provider = str(self.provider.currentData() or "")
        model = self.model.currentText().strip()
        a.model = "" if self.model.currentIndex() == 0 and model == self.model.itemText(0) else model
        mode = self.tool_mode.currentData()
        if mode == "all":
            a.tools = None
        elif mode == "none":
            a.tools = []
        else:
            a.tools = [
                str(self.tools.item(i).data(Qt.ItemDataRole.UserRole))
                for i in range(self.tools.count())
                if self.tools.item(i).checkState() == Qt.CheckState.Checked
            ]
        max_tokens = self.max_tokens.value()
        a.generation = GenerationSettings(
            temperature=self.temperature.value(),
            top_p=self.top_p.value(),
            max_tokens=int(max_tokens) if max_tokens is not None else None,
        )
        if self.is_default.isChecked():
            self.default = a.id
        elif self.default == a.id:
            self.default = next((x.id for x in self.entries if x.id != a.id), a.id)


def _wrap(layout: QHBoxLayout) -> QWidget:
    holder = QWidget()
    layout.setContentsMargins(0, 0, 0, 0)
    holder.setLayout(layout)
    return holder
