"""Settings page "Model" with several saved provider configurations: pick one to edit (the page below is the
provider page, unchanged), add / rename / delete, mark the one new chats use, choose which of its models the
composer's model switcher offers, and enter what each model costs (per million tokens; a published price is
shown as the placeholder when one is known).

Each configuration keeps its own API key: a new one gets its own keyring entry (``api_key.<name>``).
The provider page edits "the active configuration" of the settings it is given; this page hands it a working
copy whose active entry is the one being edited, so every field the provider page has (now or later) is kept
per configuration without the provider page knowing about the list.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from weclaw_desktop.agent.usage import published_prices
from weclaw_desktop.i18n import tr
from weclaw_desktop.settings import ProviderSettings, Settings
from weclaw_desktop.settings.conversation import ModelPrice
from weclaw_desktop.ui.translation import mark_content

COLUMNS = ("model", "switcher", "input", "output", "currency")


def key_name_for(name: str, taken: set[str]) -> str:
    base = "api_key." + (re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "provider")
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    return candidate


class ProviderListPage(QWidget):
    def __init__(self, provider_page: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.provider_page = provider_page
        self.work = Settings()
        self.default = ""
        self.dialog: QInputDialog | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(10)
        head = QHBoxLayout()
        self.config_label = QLabel()
        head.addWidget(self.config_label)
        self.configs = QComboBox()
        mark_content(self.configs)  # the configurations' names are the user's
        self.configs.setMinimumWidth(180)
        self.configs.currentIndexChanged.connect(self._switch)
        head.addWidget(self.configs, 1)
        self.add_button = QPushButton()
        self.add_button.clicked.connect(self._ask_name)
        self.rename_button = QPushButton()
        self.rename_button.clicked.connect(lambda: self._ask_name(rename=True))
        self.delete_button = QPushButton()
        self.delete_button.clicked.connect(self.delete)
        for b in (self.add_button, self.rename_button, self.delete_button):
            head.addWidget(b)
        layout.addLayout(head)
        self.is_default = QCheckBox()
        self.is_default.toggled.connect(self._default_toggled)
        layout.addWidget(self.is_default)
        layout.addWidget(provider_page)
        self.models_title = QLabel()
        self.models_title.setObjectName("Section")
        layout.addWidget(self.models_title)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.setMinimumHeight(120)
        self.table.itemChanged.connect(self._edited)
        layout.addWidget(self.table)
        row = QHBoxLayout()
        self.price_hint = QLabel()
        self.price_hint.setObjectName("Muted")
        self.price_hint.setWordWrap(True)
        row.addWidget(self.price_hint, 1)
        self.add_model = QPushButton()
        self.add_model.clicked.connect(self._add_current_model)
        row.addWidget(self.add_model)
        layout.addLayout(row)
        self.retranslate()

    def retranslate(self) -> None:
        self.config_label.setText(tr("configs.config"))
        self.add_button.setText(tr("configs.add"))
        self.rename_button.setText(tr("configs.rename"))
        self.delete_button.setText(tr("configs.delete"))
        self.is_default.setText(tr("configs.default"))
        self.models_title.setText(tr("configs.models"))
        self.table.setHorizontalHeaderLabels([tr(f"configs.col.{c}") for c in COLUMNS])
        self.price_hint.setText(tr("configs.price_hint"))
        self.add_model.setText(tr("configs.add_model"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    # --- load / apply -----------------------------------------------------------------------------------
    @property
    def entry(self) -> ProviderSettings:
        return self.work.provider  # the configuration being edited

    def load(self, settings: Settings) -> None:
        self.work = settings.model_copy(deep=True)
        self.default = settings.providers.current.name
        self.work.providers.active = self.default
        self._fill_configs(self.default)
        self._show()

    def apply(self, settings: Settings) -> None:
        self._commit()
        providers = self.work.providers.model_copy(deep=True)
        providers.active = self.default if providers.get(self.default) else providers.entries[0].name
        settings.providers = providers

    def _fill_configs(self, select: str) -> None:
        self.configs.blockSignals(True)
        self.configs.clear()
        for p in self.work.providers.entries:
            self.configs.addItem(p.name, p.name)
        self.configs.setCurrentIndex(max(0, self.configs.findData(select)))
        self.configs.blockSignals(False)
        self.delete_button.setEnabled(len(self.work.providers.entries) > 1)

    def _show(self) -> None:
        self.provider_page.load(self.work)  # type: ignore[attr-defined]
        self.is_default.blockSignals(True)
        self.is_default.setChecked(self.entry.name == self.default)
        self.is_default.setEnabled(self.entry.name != self.default)  # one is always the default
        self.is_default.blockSignals(False)
        self._fill_table()

    def _commit(self) -> None:
        """What the provider page and the table say, into the configuration being edited."""
        self.provider_page.apply(self.work)  # type: ignore[attr-defined]
        self._read_table()

    def _switch(self) -> None:
        name = str(self.configs.currentData() or "")
        if not name or name == self.entry.name:
            return
        self._commit()
        self.work.providers.active = name
        self._show()

    # --- configurations -------------------------------------------------------------------------------
    def _ask_name(self, rename: bool = False) -> None:
        dialog = QInputDialog(self)
        dialog.setWindowTitle(tr("configs.rename") if rename else tr("configs.add"))
        dialog.setLabelText(tr("configs.name"))
        dialog.setTextValue(self.entry.name if rename else "")
        dialog.textValueSelected.connect(lambda text: self.rename(text) if rename else self.add(text))
        self.dialog = dialog
        dialog.open()

    def add(self, name: str) -> None:
        name = " ".join(name.split())[:40]
        if not name or self.work.providers.get(name) is not None:
            return
        self._commit()
        keys = self.work.providers.key_names()
        entry = ProviderSettings(name=name, api_key_name=key_name_for(name, keys))
        self.work.providers.entries = [*self.work.providers.entries, entry]
        self.work.providers.active = name
        self._fill_configs(name)
        self._show()

    def rename(self, name: str) -> None:
        name = " ".join(name.split())[:40]
        if not name or self.work.providers.get(name) is not None:
            return
        self._commit()
        old = self.entry.name
        self.entry.name = name
        self.work.providers.active = name
        if self.default == old:
            self.default = name
        self._fill_configs(name)
        self._show()

    def delete(self) -> None:
        if len(self.work.providers.entries) <= 1:
            return
        gone = self.entry.name
        self.work.providers.entries = [p for p in self.work.providers.entries if p.name != gone]
        first = self.work.providers.entries[0].name
        if self.default == gone:
            self.default = first
        self.work.providers.active = first
        self._fill_configs(first)
        self._show()

    def _default_toggled(self, on: bool) -> None:
        if on:
            self.default = self.entry.name
            self.is_default.setEnabled(False)

    # --- models and prices --------------------------------------------------------------------------------
    def _fill_table(self) -> None:
        e = self.entry
        models = list(dict.fromkeys([*e.model_choices(), *e.prices]))
        published = published_prices().get(e.preset, {})
        self.table.blockSignals(True)  # filling is not the user editing
        self.table.setRowCount(len(models))
        for r, model in enumerate(models):
            self.table.setItem(r, 0, QTableWidgetItem(model))
            switch = QTableWidgetItem()
            switch.setFlags(Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled)
            listed = model in e.models or model == e.model
            switch.setCheckState(Qt.CheckState.Checked if listed else Qt.CheckState.Unchecked)
            self.table.setItem(r, 1, switch)
            own = e.prices.get(model)
            pub = published.get(model)
            for c, value, shown in (
                (2, own.input_per_m if own else None, pub.input_per_m if pub else None),
                (3, own.output_per_m if own else None, pub.output_per_m if pub else None),
            ):
                item = QTableWidgetItem("" if value is None else f"{value:g}")
                if value is None and shown is not None:
                    item.setToolTip(tr("configs.published", price=f"{shown:g}"))
                    item.setForeground(self.palette().placeholderText())
                    item.setText(f"{shown:g}")
                    item.setData(Qt.ItemDataRole.UserRole, "published")
                self.table.setItem(r, c, item)
            currency = own.currency if own else (pub.currency if pub else "USD")
            self.table.setItem(r, 4, QTableWidgetItem(currency))
        self.table.blockSignals(False)

    def _edited(self, item: QTableWidgetItem) -> None:
        """A published price the user typed over is theirs from now on."""
        if item.data(Qt.ItemDataRole.UserRole) == "published":
            self.table.blockSignals(True)
            item.setData(Qt.ItemDataRole.UserRole, None)
            item.setForeground(self.palette().text())
            self.table.blockSignals(False)

    def _read_table(self) -> None:
        e = self.entry
        models: list[str] = []
        prices: dict[str, ModelPrice] = {}
        for r in range(self.table.rowCount()):
            cell = self.table.item(r, 0)
            model = cell.text().strip() if cell is not None else ""
            if not model:
                continue
            switch = self.table.item(r, 1)
            if switch is not None and switch.checkState() == Qt.CheckState.Checked:
                models.append(model)
            cells = [self.table.item(r, c) for c in (2, 3, 4)]
            if any(c is not None and c.data(Qt.ItemDataRole.UserRole) == "published" for c in cells[:2]):
                published = all(
                    c is None or c.data(Qt.ItemDataRole.UserRole) == "published" or not c.text() for c in cells[:2]
                )
                if published:
                    continue
            try:
                values = [float(c.text()) if c is not None and c.text().strip() else None for c in cells[:2]]
            except ValueError:
                continue
            if values[0] is None and values[1] is None:
                continue
            currency = (cells[2].text().strip().upper() if cells[2] is not None else "") or "USD"
            if not re.fullmatch(r"[A-Z]{3}", currency):
                currency = "USD"
            prices[model] = ModelPrice(input_per_m=values[0] or 0.0, output_per_m=values[1] or 0.0, currency=currency)
        e.models = [m for m in models if m != e.model]
        e.prices = prices

    def _add_current_model(self) -> None:
        """Add the model chosen above to the switcher list."""
        model_box = getattr(self.provider_page, "model", None)
        model = model_box.currentText().strip() if isinstance(model_box, QComboBox) else ""
        if not model:
            return
        self._read_table()
        if model not in self.entry.models and model != self.entry.model:
            self.entry.models = [*self.entry.models, model]
        self._fill_table()
