"""The Settings dialog: a page list on the left, pages on the right, Save / Cancel.

Every page has ``load(settings)`` and ``apply(settings)``. Other components add their own pages (the
phone link, MCP servers) by passing ``extra_pages=[(title, widget), ...]`` with the same two methods.
The dialog is shown with ``open()``/``show()`` (never ``exec()`` from a coroutine). Save applies every
page to a copy of the store's settings and hands it to :meth:`SettingsStore.save` (validated, written,
announced to every subscriber); ``saved`` is emitted with the new settings afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from pydantic import ValidationError
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSpinBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import Settings, SettingsStore
from weclaw_desktop.ui import icons
from weclaw_desktop.ui.i18n import tr
from weclaw_desktop.ui.settings_provider import ProviderPage

ORIGINS = ("gui", "companion", "schedule")
RISKS = ("low", "medium", "high")
RULES = ("allow", "ask", "deny")


class SettingsPage(Protocol):
    def load(self, settings: Settings) -> None: ...

    def apply(self, settings: Settings) -> None: ...


def _section(text: str) -> QLabel:
    label = QLabel(text)
    label.setObjectName("Section")
    return label


class AgentPage(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.setVerticalSpacing(12)
        self.exposure = QComboBox()
        self.exposure.addItem(tr("settings.exposure.progressive"), "progressive")
        self.exposure.addItem(tr("settings.exposure.all"), "all")
        form.addRow(tr("settings.exposure"), self.exposure)
        self.max_rounds = QSpinBox()
        self.max_rounds.setRange(1, 100)
        form.addRow(tr("settings.max_rounds"), self.max_rounds)

    def load(self, settings: Settings) -> None:
        self.exposure.setCurrentIndex(max(0, self.exposure.findData(settings.agent.exposure)))
        self.max_rounds.setValue(settings.agent.max_rounds)

    def apply(self, settings: Settings) -> None:
        settings.agent.exposure = self.exposure.currentData()
        settings.agent.max_rounds = self.max_rounds.value()


class ApprovalsPage(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        layout.addWidget(_section(tr("settings.approval.rules")))
        grid = QGridLayout()
        grid.setHorizontalSpacing(10)
        grid.setVerticalSpacing(6)
        grid.addWidget(QLabel(tr("settings.approval.origin")), 0, 0)
        for col, risk in enumerate(RISKS, start=1):
            header = QLabel(tr("approval.risk", risk=tr(f"risk.{risk}")))
            header.setObjectName("Muted")
            grid.addWidget(header, 0, col)
        self.rules: dict[tuple[str, str], QComboBox] = {}
        for row, origin in enumerate(ORIGINS, start=1):
            grid.addWidget(QLabel(tr(f"origin.{origin}")), row, 0)
            for col, risk in enumerate(RISKS, start=1):
                combo = QComboBox()
                for rule in RULES:
                    combo.addItem(tr(f"settings.rule.{rule}"), rule)
                grid.addWidget(combo, row, col)
                self.rules[(origin, risk)] = combo
        layout.addLayout(grid)
        layout.addWidget(_section(tr("settings.remembered")))
        self.remembered = QListWidget()
        self.remembered.setMaximumHeight(140)
        layout.addWidget(self.remembered)
        row_layout = QHBoxLayout()
        self.empty = QLabel(tr("settings.remembered.none"))
        self.empty.setObjectName("Muted")
        row_layout.addWidget(self.empty)
        row_layout.addStretch(1)  # keeps Revoke its own size when the "none" label is hidden
        self.revoke = QPushButton(tr("settings.revoke"))
        self.revoke.clicked.connect(self._revoke)
        row_layout.addWidget(self.revoke)
        layout.addLayout(row_layout)
        layout.addStretch(1)

    def load(self, settings: Settings) -> None:
        rules = settings.agent.approvals.rules
        for (origin, risk), combo in self.rules.items():
            value = rules.get(origin, {}).get(risk, "ask")
            combo.setCurrentIndex(max(0, combo.findData(value)))
        self.remembered.clear()
        self.remembered.addItems(settings.agent.approvals.remembered)
        self._update_empty()

    def _revoke(self) -> None:
        for item in self.remembered.selectedItems() or [self.remembered.currentItem()]:
            if item is not None:
                self.remembered.takeItem(self.remembered.row(item))
        self._update_empty()

    def _update_empty(self) -> None:
        has = self.remembered.count() > 0
        self.empty.setVisible(not has)
        self.revoke.setEnabled(has)

    def apply(self, settings: Settings) -> None:
        rules = {origin: dict(values) for origin, values in settings.agent.approvals.rules.items()}
        for (origin, risk), combo in self.rules.items():
            rules.setdefault(origin, {})[risk] = combo.currentData()
        remembered = [self.remembered.item(i).text() for i in range(self.remembered.count())]
        settings.agent.approvals = settings.agent.approvals.model_copy(
            update={"rules": rules, "remembered": remembered}
        )


class FilesPage(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        layout.addWidget(_section(tr("settings.roots")))
        self.roots = QListWidget()
        self.roots.setMaximumHeight(150)
        layout.addWidget(self.roots)
        row = QHBoxLayout()
        hint = QLabel(tr("settings.roots.home"))
        hint.setObjectName("Muted")
        row.addWidget(hint, 1)
        add = QPushButton(tr("settings.add"))
        add.clicked.connect(self._add_root)
        row.addWidget(add)
        remove = QPushButton(tr("settings.remove"))
        remove.clicked.connect(lambda: [self.roots.takeItem(self.roots.row(i)) for i in self.roots.selectedItems()])
        row.addWidget(remove)
        layout.addLayout(row)
        layout.addWidget(_section(tr("settings.outputs")))
        out_row = QHBoxLayout()
        self.outputs = QLineEdit()
        out_row.addWidget(self.outputs, 1)
        browse = QPushButton(tr("settings.browse"))
        browse.clicked.connect(self._browse_outputs)
        out_row.addWidget(browse)
        layout.addLayout(out_row)
        layout.addStretch(1)

    def _folder_dialog(self, on_chosen: object) -> None:
        dialog = QFileDialog(self)
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.fileSelected.connect(on_chosen)
        dialog.open()

    def _add_root(self) -> None:
        self._folder_dialog(lambda path: self.add_root(path))

    def add_root(self, path: str) -> None:
        existing = {self.roots.item(i).text() for i in range(self.roots.count())}
        if path and path not in existing:
            self.roots.addItem(path)

    def _browse_outputs(self) -> None:
        self._folder_dialog(self.outputs.setText)

    def load(self, settings: Settings) -> None:
        self.roots.clear()
        self.roots.addItems(settings.tools.allowed_roots)
        self.outputs.setText(str(settings.outputs_dir()))

    def apply(self, settings: Settings) -> None:
        settings.tools.allowed_roots = [self.roots.item(i).text() for i in range(self.roots.count())]
        text = self.outputs.text().strip()
        default = str(Settings().outputs_dir())
        settings.tools.outputs_dir = "" if not text or text == default else str(Path(text).expanduser())


class AppearancePage(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.setVerticalSpacing(12)
        self.language = QComboBox()
        self.language.addItem(tr("settings.language.system"), "system")
        self.language.addItem("English", "en")
        self.language.addItem("简体中文", "zh")
        form.addRow(tr("settings.language"), self.language)
        note = QLabel(tr("settings.restart_note"))
        note.setObjectName("Muted")
        form.addRow("", note)
        self.theme = QComboBox()
        for value in ("system", "light", "dark"):
            self.theme.addItem(tr(f"settings.theme.{value}"), value)
        form.addRow(tr("settings.theme"), self.theme)
        self.close_to_tray = QCheckBox(tr("settings.close_to_tray"))
        form.addRow("", self.close_to_tray)

    def load(self, settings: Settings) -> None:
        self.language.setCurrentIndex(max(0, self.language.findData(settings.ui.language)))
        self.theme.setCurrentIndex(max(0, self.theme.findData(settings.ui.theme)))
        self.close_to_tray.setChecked(settings.ui.close_to_tray)

    def apply(self, settings: Settings) -> None:
        settings.ui.language = self.language.currentData()
        settings.ui.theme = self.theme.currentData()
        settings.ui.close_to_tray = self.close_to_tray.isChecked()


class SettingsDialog(QDialog):
    saved = Signal(object)  # the new Settings

    def __init__(
        self,
        store: SettingsStore,
        secrets: SecretStore,
        *,
        extra_pages: Sequence[tuple[str, QWidget]] = (),
        key_lookup: Callable[[], str | None] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("settings.title"))
        self.setMinimumSize(760, 520)
        self.store = store
        self.provider_page = ProviderPage(secrets, key_lookup=key_lookup)
        self.agent_page = AgentPage()
        self.approvals_page = ApprovalsPage()
        self.files_page = FilesPage()
        self.appearance_page = AppearancePage()
        pages: list[tuple[str, str, QWidget]] = [
            ("settings.page.provider", "chip", self.provider_page),
            ("settings.page.agent", "tool", self.agent_page),
            ("settings.page.approvals", "shield", self.approvals_page),
            ("settings.page.files", "folder", self.files_page),
            ("settings.page.appearance", "screen", self.appearance_page),
        ]
        self.pages: list[QWidget] = []
        root = QVBoxLayout(self)
        root.setContentsMargins(0, 0, 0, 0)
        root.setSpacing(0)
        body = QHBoxLayout()
        body.setContentsMargins(12, 16, 20, 8)
        body.setSpacing(16)
        self.nav = QListWidget()
        self.nav.setObjectName("SettingsNav")
        self.nav.setFixedWidth(170)
        self.nav.setIconSize(icons.icon_size(18))
        self.stack = QStackedWidget()
        for key, icon_name, page in pages:
            self._add_page(tr(key), icon_name, page)
        for title, widget in extra_pages:
            self._add_page(title, "plug", widget)
        self.nav.currentRowChanged.connect(self.stack.setCurrentIndex)
        self.nav.setCurrentRow(0)
        body.addWidget(self.nav)
        body.addWidget(self.stack, 1)
        root.addLayout(body, 1)

        footer = QHBoxLayout()
        footer.setContentsMargins(20, 8, 20, 16)
        self.message = QLabel()
        self.message.setWordWrap(True)
        footer.addWidget(self.message, 1)
        self.cancel_button = QPushButton(tr("common.cancel"))
        self.cancel_button.clicked.connect(self.reject)
        self.save_button = QPushButton(tr("common.save"))
        self.save_button.setProperty("primary", True)
        self.save_button.setDefault(True)
        self.save_button.clicked.connect(self.save)
        footer.addWidget(self.cancel_button)
        footer.addWidget(self.save_button)
        root.addLayout(footer)
        self.load(store.settings)

    def _add_page(self, title: str, icon_name: str, page: QWidget) -> None:
        item = QListWidgetItem(icons.icon(icon_name), title)
        item.setSizeHint(item.sizeHint().expandedTo(icons.icon_size(34)))
        self.nav.addItem(item)
        wrapper = QWidget()
        layout = QVBoxLayout(wrapper)
        layout.setContentsMargins(0, 0, 0, 0)
        heading = QLabel(title)
        heading.setObjectName("Title")
        layout.addWidget(heading)
        layout.addSpacing(8)
        layout.addWidget(page, 1)
        self.stack.addWidget(wrapper)
        self.pages.append(page)

    def show_page(self, index: int) -> None:
        self.nav.setCurrentRow(index)

    def load(self, settings: Settings) -> None:
        for page in self.pages:
            page.load(settings)  # type: ignore[attr-defined]

    @property
    def settings(self) -> Settings:
        return self.store.settings

    def save(self) -> bool:
        """Apply every page to a copy, save it through the store; on a bad value keep the dialog open and say why."""
        candidate = self.store.snapshot()
        try:
            for page in self.pages:
                page.apply(candidate)  # type: ignore[attr-defined]
            change = self.store.save(candidate)
        except (ValidationError, ValueError, OSError) as exc:
            self.message.setText(tr("settings.invalid", message=str(exc).splitlines()[0]))
            return False
        self.saved.emit(change.settings)
        self.accept()
        return True

    def done(self, result: int) -> None:
        self.provider_page.cancel_tasks()
        super().done(result)


__all__ = ["AgentPage", "AppearancePage", "ApprovalsPage", "FilesPage", "SettingsDialog", "SettingsPage"]
