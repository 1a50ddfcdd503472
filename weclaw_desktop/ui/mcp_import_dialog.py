"""Import MCP servers on the MCP page: paste an ``mcpServers`` JSON or open a file, check the preview.

The preview lists each server that will be added (or why an entry cannot be), and every env value and
header with a box that says whether it is a secret (kept in the keyring) — the guess of the declared
rule, which the user can change. OK hands the plan to the page, which adds the servers as new entries;
nothing is saved until the settings dialog is saved.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from weclaw_desktop.i18n import tr
from weclaw_desktop.mcp.importer import ConfigImportError, ImportPlan, parse_config


class McpImportDialog(QDialog):
    def __init__(self, existing: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.existing = existing
        self.plan: ImportPlan | None = None
        self.resize(640, 520)
        layout = QVBoxLayout(self)
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        layout.addWidget(self.hint)
        self.text = QPlainTextEdit()
        self.text.setPlaceholderText('{"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}')
        self.text.textChanged.connect(self.preview)
        layout.addWidget(self.text, 2)
        row = QHBoxLayout()
        self.file_button = QPushButton()
        self.file_button.clicked.connect(self.choose_file)
        row.addWidget(self.file_button)
        row.addStretch(1)
        layout.addLayout(row)
        self.tree = QTreeWidget()
        self.tree.setColumnCount(2)
        self.tree.itemChanged.connect(self._flipped)
        layout.addWidget(self.tree, 3)
        self.status = QLabel()
        self.status.setWordWrap(True)
        layout.addWidget(self.status)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self._filling = False
        self.retranslate()
        self.preview()

    def choose_file(self) -> None:
        dialog = QFileDialog(self, tr("mcp.import.file"), str(Path.home()), "JSON (*.json);;* (*)")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.fileSelected.connect(self.load_file)
        dialog.open()  # never exec(): the page lives on the asyncio loop

    def load_file(self, path: str) -> None:
        try:
            self.text.setPlainText(Path(path).read_text(encoding="utf-8-sig"))
        except (OSError, UnicodeDecodeError) as exc:
            self.status.setText(tr("mcp.import.unreadable", path=path, reason=str(exc)))

    def preview(self) -> None:
        text = self.text.toPlainText().strip()
        self.plan = None
        self._filling = True
        try:
            self.tree.clear()
            if not text:
                self.status.setText("")
            else:
                try:
                    self.plan = parse_config(text, existing=self.existing)
                except ConfigImportError as exc:
                    self.status.setText("⚠ " + str(exc))
                else:
                    self._fill(self.plan)
        finally:
            self._filling = False
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setEnabled(bool(self.plan and self.plan.servers))

    def _fill(self, plan: ImportPlan) -> None:
        for server in plan.servers:
            s = server.settings
            target = " ".join([s.command, *s.args]) if s.transport == "stdio" else s.url
            top = QTreeWidgetItem([s.name, f"{s.transport}: {target}"])
            for value in server.values:
                child = QTreeWidgetItem([f"{value.kind} {value.name}", ""])
                child.setFlags(child.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                child.setCheckState(1, Qt.CheckState.Checked if value.secret else Qt.CheckState.Unchecked)
                child.setText(1, tr("mcp.import.secret"))
                child.setData(0, Qt.ItemDataRole.UserRole, (s.name, value.name))
                top.addChild(child)
            for note in server.notes:
                top.addChild(QTreeWidgetItem(["", note]))
            self.tree.addTopLevelItem(top)
            top.setExpanded(True)
        for problem in plan.problems:
            self.tree.addTopLevelItem(QTreeWidgetItem(["⚠", problem]))
        self.status.setText(tr("mcp.import.count", n=len(plan.servers)))
        self.tree.resizeColumnToContents(0)

    def _flipped(self, item: QTreeWidgetItem, column: int) -> None:
        if self._filling or column != 1 or self.plan is None:
            return
        ref = item.data(0, Qt.ItemDataRole.UserRole)
        if not ref:
            return
        server = self.plan.server(ref[0])
        if server is not None:
            server.set_secret(ref[1], item.checkState(1) == Qt.CheckState.Checked)

    def retranslate(self) -> None:
        self.setWindowTitle(tr("mcp.import.title"))
        self.hint.setText(tr("mcp.import.hint"))
        self.file_button.setText(tr("mcp.import.file"))
        self.tree.setHeaderLabels([tr("mcp.import.server"), tr("mcp.import.details")])

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)
