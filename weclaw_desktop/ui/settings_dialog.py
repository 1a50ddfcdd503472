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
from typing import ClassVar, Protocol

from pydantic import ValidationError
from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from weclaw_desktop.i18n import Text, tr
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import Settings, SettingsStore
from weclaw_desktop.toolkit.approval import AllowRule
from weclaw_desktop.toolkit.registry import ToolRegistry
from weclaw_desktop.toolkit.summary import short_path
from weclaw_desktop.ui import icons
from weclaw_desktop.ui.assistants_page import AssistantsPage
from weclaw_desktop.ui.provider_list import ProviderListPage
from weclaw_desktop.ui.settings_provider import ProviderPage
from weclaw_desktop.ui.settings_tools import ToolsPage

#: The dialog's size when it opens, and the smallest it may get: every page must fit the default size
#: (tests/ui/test_settings_fit.py renders each page at it).
DEFAULT_SIZE = (960, 680)
MIN_SIZE = (720, 520)
ORIGINS = ("gui", "companion", "schedule")
RISKS = ("low", "medium", "high")
RULES = ("allow", "ask", "deny")


class SettingsPage(Protocol):
    def load(self, settings: Settings) -> None: ...

    def apply(self, settings: Settings) -> None: ...


def _section() -> QLabel:
    label = QLabel()
    label.setObjectName("Section")
    return label


class _Page(QWidget):
    """A settings page: its texts come from :meth:`retranslate`, called at the end of construction and on
    every language change."""

    def retranslate(self) -> None:
        raise NotImplementedError

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)


def _fill_combo(combo: QComboBox, items: Sequence[tuple[str, str]]) -> None:
    """(key, value) items; on a retranslation only the texts change, the selection stays."""
    if combo.count() == len(items):
        for i, (key, _value) in enumerate(items):
            combo.setItemText(i, tr(key))
        return
    combo.clear()
    for key, value in items:
        combo.addItem(tr(key), value)


class AgentPage(_Page):
    EXPOSURES = (("settings.exposure.progressive", "progressive"), ("settings.exposure.all", "all"))

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.setVerticalSpacing(12)
        self.exposure = QComboBox()
        self.exposure_label = QLabel()
        form.addRow(self.exposure_label, self.exposure)
        self.max_rounds = QSpinBox()
        self.max_rounds.setRange(1, 100)
        self.max_rounds_label = QLabel()
        form.addRow(self.max_rounds_label, self.max_rounds)
        self.retranslate()

    def retranslate(self) -> None:
        _fill_combo(self.exposure, self.EXPOSURES)
        self.exposure_label.setText(tr("settings.exposure"))
        self.max_rounds_label.setText(tr("settings.max_rounds"))

    def load(self, settings: Settings) -> None:
        self.exposure.setCurrentIndex(max(0, self.exposure.findData(settings.agent.exposure)))
        self.max_rounds.setValue(settings.agent.max_rounds)

    def apply(self, settings: Settings) -> None:
        settings.agent.exposure = self.exposure.currentData()
        settings.agent.max_rounds = self.max_rounds.value()


def rule_text(rule: AllowRule) -> str:
    """One "always allow" rule as the Settings list shows it."""
    action = rule.function[len(rule.tool) + 1 :] if rule.function.startswith(rule.tool + "_") else rule.function
    if rule.scope == "server":
        return tr("settings.always.scope.server", server=rule.tool.removeprefix("mcp_"))
    if rule.scope == "folder":
        return tr("settings.always.scope.folder", tool=rule.tool, action=action, folder=short_path(rule.folder))
    return tr("settings.always.scope.function", tool=rule.tool, action=action)


class ApprovalsPage(_Page):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        self.rules_title = _section()
        layout.addWidget(self.rules_title)
        grid = QGridLayout()
        grid.setHorizontalSpacing(10)
        grid.setVerticalSpacing(6)
        self.origin_header = QLabel()
        grid.addWidget(self.origin_header, 0, 0)
        self.risk_headers: list[QLabel] = []
        for col, _risk in enumerate(RISKS, start=1):
            header = QLabel()
            header.setObjectName("Muted")
            grid.addWidget(header, 0, col)
            self.risk_headers.append(header)
        self.rules: dict[tuple[str, str], QComboBox] = {}
        self.origin_labels: list[QLabel] = []
        for row, origin in enumerate(ORIGINS, start=1):
            label = QLabel()
            grid.addWidget(label, row, 0)
            self.origin_labels.append(label)
            for col, risk in enumerate(RISKS, start=1):
                combo = QComboBox()
                grid.addWidget(combo, row, col)
                self.rules[(origin, risk)] = combo
        layout.addLayout(grid)
        self.remembered_title = _section()
        layout.addWidget(self.remembered_title)
        self.always_note = QLabel()
        self.always_note.setObjectName("Muted")
        self.always_note.setWordWrap(True)
        layout.addWidget(self.always_note)
        self.remembered = QListWidget()  # every "always allow" rule, with its scope; revocable
        self.remembered.setMaximumHeight(160)
        self.remembered.setSelectionMode(QListWidget.SelectionMode.ExtendedSelection)
        layout.addWidget(self.remembered)
        self._rules: list[AllowRule] = []
        row_layout = QHBoxLayout()
        self.empty = QLabel()
        self.empty.setObjectName("Muted")
        row_layout.addWidget(self.empty)
        row_layout.addStretch(1)  # keeps Revoke its own size when the "none" label is hidden
        self.revoke = QPushButton()
        self.revoke.clicked.connect(self._revoke)
        row_layout.addWidget(self.revoke)
        layout.addLayout(row_layout)
        layout.addStretch(1)
        self.retranslate()

    def retranslate(self) -> None:
        self.rules_title.setText(tr("settings.approval.rules"))
        self.origin_header.setText(tr("settings.approval.origin"))
        for header, risk in zip(self.risk_headers, RISKS, strict=True):
            header.setText(tr("approval.risk", risk=tr(f"risk.{risk}")))
        for label, origin in zip(self.origin_labels, ORIGINS, strict=True):
            label.setText(tr(f"origin.{origin}"))
        for combo in self.rules.values():
            _fill_combo(combo, [(f"settings.rule.{rule}", rule) for rule in RULES])
        self.remembered_title.setText(tr("settings.always.title"))
        self.always_note.setText(tr("settings.always.note"))
        self.empty.setText(tr("settings.always.none"))
        self.revoke.setText(tr("settings.revoke"))
        self._fill_rules()

    def load(self, settings: Settings) -> None:
        rules = settings.agent.approvals.rules
        for (origin, risk), combo in self.rules.items():
            value = rules.get(origin, {}).get(risk, "ask")
            combo.setCurrentIndex(max(0, combo.findData(value)))
        approvals = settings.agent.approvals
        legacy = [AllowRule(scope="function", tool=f.rsplit("_", 1)[0], function=f) for f in approvals.remembered]
        self._rules = [*legacy, *approvals.always]
        self._fill_rules()

    def _fill_rules(self) -> None:
        self.remembered.clear()
        for rule in getattr(self, "_rules", []):
            item = QListWidgetItem(rule_text(rule))
            item.setToolTip(rule.created or "")
            self.remembered.addItem(item)
        self._update_empty()

    def _revoke(self) -> None:
        rows = sorted({self.remembered.row(i) for i in self.remembered.selectedItems()}, reverse=True)
        if not rows and self.remembered.currentRow() >= 0:
            rows = [self.remembered.currentRow()]
        for row in rows:
            del self._rules[row]
        self._fill_rules()

    def _update_empty(self) -> None:
        has = self.remembered.count() > 0
        self.empty.setVisible(not has)
        self.revoke.setEnabled(has)

    def apply(self, settings: Settings) -> None:
        rules = {origin: dict(values) for origin, values in settings.agent.approvals.rules.items()}
        for (origin, risk), combo in self.rules.items():
            rules.setdefault(origin, {})[risk] = combo.currentData()
        settings.agent.approvals = settings.agent.approvals.model_copy(
            update={"rules": rules, "remembered": [], "always": list(self._rules)}
        )


class FilesPage(_Page):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        self.roots_title = _section()
        layout.addWidget(self.roots_title)
        self.roots = QListWidget()
        self.roots.setMaximumHeight(150)
        layout.addWidget(self.roots)
        row = QHBoxLayout()
        self.roots_hint = QLabel()
        self.roots_hint.setObjectName("Muted")
        row.addWidget(self.roots_hint, 1)
        self.add_button = QPushButton()
        self.add_button.clicked.connect(self._add_root)
        row.addWidget(self.add_button)
        self.remove_button = QPushButton()
        self.remove_button.clicked.connect(
            lambda: [self.roots.takeItem(self.roots.row(i)) for i in self.roots.selectedItems()]
        )
        row.addWidget(self.remove_button)
        layout.addLayout(row)
        self.outputs_title = _section()
        layout.addWidget(self.outputs_title)
        out_row = QHBoxLayout()
        self.outputs = QLineEdit()
        out_row.addWidget(self.outputs, 1)
        self.browse_button = QPushButton()
        self.browse_button.clicked.connect(self._browse_outputs)
        out_row.addWidget(self.browse_button)
        layout.addLayout(out_row)
        layout.addStretch(1)
        self.retranslate()

    def retranslate(self) -> None:
        self.roots_title.setText(tr("settings.roots"))
        self.roots_hint.setText(tr("settings.roots.home"))
        self.add_button.setText(tr("settings.add"))
        self.remove_button.setText(tr("settings.remove"))
        self.outputs_title.setText(tr("settings.outputs"))
        self.browse_button.setText(tr("settings.browse"))

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


class AppearancePage(_Page):
    #: Each language is named in its own language, so a person who cannot read the current one finds theirs.
    LANGUAGE_NAMES: ClassVar[dict[str, str]] = {"en": "English", "zh": "简体中文"}

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.setVerticalSpacing(12)
        self.language = QComboBox()
        self.language.addItem("", "system")
        for code, name in self.LANGUAGE_NAMES.items():
            self.language.addItem(name, code)
        self.language_label = QLabel()
        form.addRow(self.language_label, self.language)
        self.theme = QComboBox()
        self.theme_label = QLabel()
        form.addRow(self.theme_label, self.theme)
        self.close_to_tray = QCheckBox()
        form.addRow("", self.close_to_tray)
        self.retranslate()

    def retranslate(self) -> None:
        self.language.setItemText(0, tr("settings.language.system"))
        self.language_label.setText(tr("settings.language"))
        _fill_combo(self.theme, [(f"settings.theme.{v}", v) for v in ("system", "light", "dark")])
        self.theme_label.setText(tr("settings.theme"))
        self.close_to_tray.setText(tr("settings.close_to_tray"))

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
        extra_pages: Sequence[tuple[str | Text, QWidget]] = (),
        key_lookup: Callable[[], str | None] | None = None,
        registry: ToolRegistry | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setMinimumSize(MIN_SIZE[0], MIN_SIZE[1])
        self.resize(*DEFAULT_SIZE)
        self.store = store
        self.provider_page = ProviderPage(secrets, key_lookup=key_lookup)
        self.providers_page = ProviderListPage(self.provider_page)  # several saved configurations around it
        self.assistants_page = AssistantsPage(registry)
        self.agent_page = AgentPage()
        self.approvals_page = ApprovalsPage()
        self.files_page = FilesPage()
        self.appearance_page = AppearancePage()
        self.tools_page = ToolsPage(registry or ToolRegistry.from_path(), secrets)
        pages: list[tuple[str, str | Text, str, QWidget]] = [
            ("provider", Text("settings.page.provider"), "chip", self.providers_page),
            ("assistants", Text("settings.page.assistants"), "brain", self.assistants_page),
            ("agent", Text("settings.page.agent"), "tool", self.agent_page),
            ("approvals", Text("settings.page.approvals"), "shield", self.approvals_page),
            ("tools", Text("settings.page.tools"), "terminal", self.tools_page),
            ("files", Text("settings.page.files"), "folder", self.files_page),
            ("appearance", Text("settings.page.appearance"), "screen", self.appearance_page),
        ]
        self.pages: list[QWidget] = []
        self.page_keys: list[str] = []
        self._titles: list[tuple[str | Text, QLabel]] = []  # page title -> its heading
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
        for key, title, icon_name, page in pages:
            self._add_page(key, title, icon_name, page)
        for title, widget in extra_pages:
            key = str(
                widget.property("settingsKey") or (title.key.rsplit(".", 1)[-1] if isinstance(title, Text) else title)
            )
            self._add_page(key.lower(), title, "plug", widget)
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
        self.cancel_button = QPushButton()
        self.cancel_button.clicked.connect(self.reject)
        self.save_button = QPushButton()
        self.save_button.setProperty("primary", True)
        self.save_button.setDefault(True)
        self.save_button.clicked.connect(self.save)
        footer.addWidget(self.cancel_button)
        footer.addWidget(self.save_button)
        root.addLayout(footer)
        self._message: Text | None = None
        self.retranslate()
        self.load(store.settings)

    def retranslate(self) -> None:
        self.setWindowTitle(tr("settings.title"))
        for row, (title, heading) in enumerate(self._titles):
            item = self.nav.item(row)
            if item is not None:
                item.setText(str(title))
            heading.setText(str(title))
        self.cancel_button.setText(tr("common.cancel"))
        self.save_button.setText(tr("common.save"))
        if self._message is not None:
            self.message.setText(str(self._message))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def _add_page(self, key: str, title: str | Text, icon_name: str, page: QWidget) -> None:
        self.page_keys.append(key)
        item = QListWidgetItem(str(title))
        icons.bind(item, icon_name)
        item.setSizeHint(item.sizeHint().expandedTo(icons.icon_size(34)))
        self.nav.addItem(item)
        wrapper = QWidget()
        layout = QVBoxLayout(wrapper)
        layout.setContentsMargins(0, 0, 0, 0)
        heading = QLabel(str(title))
        heading.setObjectName("Title")
        self._titles.append((title, heading))
        layout.addWidget(heading)
        layout.addSpacing(8)
        # a page taller than the dialog scrolls instead of being crushed (the MCP page on a small screen)
        area = QScrollArea()
        area.setObjectName("SettingsPageArea")
        area.setWidgetResizable(True)
        area.setFrameShape(QFrame.Shape.NoFrame)
        area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        area.setWidget(page)
        layout.addWidget(area, 1)
        self.stack.addWidget(wrapper)
        self.pages.append(page)

    def show_page(self, index: int | str) -> None:
        """Show a page by index or key ("provider", "agent", "approvals", "tools", "files", "appearance", "mcp")."""
        if isinstance(index, str):
            index = self.page_keys.index(index)
        self.nav.setCurrentRow(index)

    def page(self, key: str) -> QWidget | None:
        return self.pages[self.page_keys.index(key)] if key in self.page_keys else None

    def show_target(self, page: str, section: str = "") -> QWidget | None:
        """Show a page (and a section of it, e.g. Tools > email); the widget shown, None if it does not exist."""
        widget = self.page(page)
        if widget is None:
            return None
        self.show_page(page)
        if section:
            find = getattr(widget, "show_section", None)
            return find(section) if callable(find) else None
        return widget

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
            self._message = Text("settings.invalid", message=str(exc).splitlines()[0])
            self.message.setText(str(self._message))
            return False
        self.saved.emit(change.settings)
        self.accept()
        return True

    def done(self, result: int) -> None:
        self.provider_page.cancel_tasks()
        super().done(result)


__all__ = ["AgentPage", "AppearancePage", "ApprovalsPage", "FilesPage", "SettingsDialog", "SettingsPage", "ToolsPage"]
