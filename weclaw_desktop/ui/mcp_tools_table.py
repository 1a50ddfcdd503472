"""The tools of one MCP server on the MCP page: a switch and an approval mode per tool.

Each row is a server tool (its own name, what it does, the function the model sees). The box switches it
on or off (off = ``deny``: never offered); the mode is Automatic (from the tool's annotations and the
server's trust), Ask first, or Allow without asking. Tools the server could not offer are listed below
with the reason. Edits go to ``modes()``, which the page writes to the server's ``tool_approval``.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import QComboBox, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from weclaw_desktop.i18n import tr
from weclaw_desktop.mcp.tool import ServerToolInfo

MODES = ("", "ask", "allow")  # '' = automatic; "deny" is the switch


class McpToolsTable(QTableWidget):
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, 3, parent)
        self.verticalHeader().setVisible(False)
        header = self.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.setSelectionMode(QTableWidget.SelectionMode.NoSelection)
        self.setWordWrap(False)
        self._tools: list[ServerToolInfo] = []
        self._problems: list[str] = []
        self._modes: dict[str, str] = {}
        self._loading = False
        self.itemChanged.connect(self._switched)
        self.retranslate()

    def show_tools(self, tools: list[ServerToolInfo], problems: list[str], modes: Mapping[str, str]) -> None:
        """Fill the table: ``modes`` is the server's tool_approval as edited (it wins over ``tools``' modes)."""
        self._tools, self._problems, self._modes = list(tools), list(problems), dict(modes)
        self._loading = True
        try:
            self.setRowCount(0)
            for tool in self._tools:
                row = self.rowCount()
                self.insertRow(row)
                item = QTableWidgetItem(tool.name)
                on = self._modes.get(tool.name) != "deny"
                usable = bool(tool.function) or not on  # a tool the server cannot offer (see the problems) is greyed
                flags = Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled
                item.setFlags(flags if usable else Qt.ItemFlag.NoItemFlags)
                item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
                item.setToolTip("\n".join(t for t in (tool.description, tool.function) if t))
                self.setItem(row, 0, item)
                risk = QTableWidgetItem(tr(f"risk.{tool.risk}") if tool.risk else "")
                risk.setFlags(Qt.ItemFlag.ItemIsEnabled)
                self.setItem(row, 1, risk)
                combo = QComboBox()
                for mode in MODES:
                    combo.addItem(tr(f"mcp.mode.{mode or 'auto'}"), mode)
                current = self._modes.get(tool.name, "")
                combo.setCurrentIndex(max(0, combo.findData(current if current != "deny" else "")))
                combo.setEnabled(on and usable)
                combo.currentIndexChanged.connect(lambda _i, name=tool.name, c=combo: self._mode(name, c))
                self.setCellWidget(row, 2, combo)
            for problem in self._problems:
                row = self.rowCount()
                self.insertRow(row)
                item = QTableWidgetItem("⚠ " + problem)
                item.setFlags(Qt.ItemFlag.ItemIsEnabled)
                item.setToolTip(problem)
                self.setItem(row, 0, item)
                self.setSpan(row, 0, 1, 3)
        finally:
            self._loading = False

    def rows(self) -> list[str]:
        """Each tool's function name (its own name when it is not offered), then the problems."""
        return [t.function or t.name for t in self._tools] + ["⚠ " + p for p in self._problems]

    def modes(self) -> dict[str, str]:
        return dict(self._modes)

    def _switched(self, item: QTableWidgetItem) -> None:
        if self._loading or item.column() != 0 or item.row() >= len(self._tools):
            return
        name = self._tools[item.row()].name
        combo = self.cellWidget(item.row(), 2)
        if item.checkState() == Qt.CheckState.Checked:
            mode = combo.currentData() if isinstance(combo, QComboBox) else ""
            self._set(name, str(mode or ""))
        else:
            self._set(name, "deny")
        if isinstance(combo, QComboBox):
            combo.setEnabled(item.checkState() == Qt.CheckState.Checked)

    def _mode(self, name: str, combo: QComboBox) -> None:
        if not self._loading and self._modes.get(name) != "deny":
            self._set(name, str(combo.currentData() or ""))

    def _set(self, name: str, mode: str) -> None:
        if mode:
            self._modes[name] = mode
        else:
            self._modes.pop(name, None)
        self.changed.emit()

    def retranslate(self) -> None:
        self.setHorizontalHeaderLabels([tr("mcp.tools.tool"), tr("mcp.tools.risk"), tr("mcp.tools.approval")])
        for row in range(min(self.rowCount(), len(self._tools))):
            combo = self.cellWidget(row, 2)
            if isinstance(combo, QComboBox):
                for i in range(combo.count()):
                    combo.setItemText(i, tr(f"mcp.mode.{combo.itemData(i) or 'auto'}"))
            risk = self.item(row, 1)
            if risk is not None and self._tools[row].risk:
                risk.setText(tr(f"risk.{self._tools[row].risk}"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)
