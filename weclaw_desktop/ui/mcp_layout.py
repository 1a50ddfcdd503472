"""The MCP page's widgets and layout, built onto the page (``build(page)``): made to fit the settings dialog
at its smallest size. The server list (with Add, Remove, Import, Export) on the left; on the right three
tabs — Connection (how to start or reach the server, its secrets), Behaviour (trust, keywords, timeout)
and Tools (a switch and an approval mode per tool) — each scrolling on its own when the window is small;
under the tabs one row with Test, Reconnect, Edit as JSON and the status line."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QGridLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from weclaw_desktop.ui.mcp_tools_table import McpToolsTable

#: The MCP page (``ui.mcp_page.McpPage``); not imported here, which would make an import cycle.
McpPage = Any

TRANSPORTS = ("stdio", "http", "sse")


def _scrolled(form: QFormLayout) -> QScrollArea:
    """``form`` at its natural height at the top of a scroll area (rows never spread out)."""
    inner = QWidget()
    column = QVBoxLayout(inner)
    column.addLayout(form)
    column.addStretch(1)
    area = QScrollArea()
    area.setWidget(inner)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    return area


def build(page: McpPage) -> None:
    p = page
    p.server_list = QListWidget()
    p.server_list.currentRowChanged.connect(p._select)
    p.add_button, p.remove_button = QPushButton(), QPushButton()
    p.import_button, p.export_button = QPushButton(), QPushButton()
    p.add_button.clicked.connect(p.add_server)
    p.remove_button.clicked.connect(p.remove_server)
    p.import_button.clicked.connect(p.open_import)
    p.export_button.clicked.connect(p.open_export)
    left = QVBoxLayout()
    left.setContentsMargins(0, 0, 0, 0)
    left.addWidget(p._label("mcp.servers"))
    left.addWidget(p.server_list, 1)
    grid = QGridLayout()
    grid.addWidget(p.add_button, 0, 0)
    grid.addWidget(p.remove_button, 0, 1)
    grid.addWidget(p.import_button, 1, 0)
    grid.addWidget(p.export_button, 1, 1)
    left.addLayout(grid)
    left_widget = QWidget()
    left_widget.setLayout(left)
    left_widget.setMinimumWidth(150)

    # --- Connection -----------------------------------------------------------------------------
    p.name_edit = QLineEdit()
    p.enabled_check = QCheckBox()
    p.transport_combo = QComboBox()
    for value in TRANSPORTS:
        p.transport_combo.addItem("", value)
    p.command_edit = QLineEdit()
    p.args_edit = QLineEdit()
    p.args_edit.setPlaceholderText("-y @modelcontextprotocol/server-filesystem ~/Documents")
    p.cwd_edit = QLineEdit()
    p.env_edit = QPlainTextEdit()
    p.env_edit.setMaximumHeight(64)
    p.url_edit = QLineEdit()
    p.url_edit.setPlaceholderText("https://example.com/mcp")
    p.headers_edit = QPlainTextEdit()
    p.headers_edit.setMaximumHeight(64)
    p.oauth_check = QCheckBox()
    p.secrets_table = QTableWidget(0, 2)
    p.secrets_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
    p.secrets_table.verticalHeader().setVisible(False)
    p.secrets_table.setMaximumHeight(96)
    p.add_secret_button = QPushButton()
    p.add_secret_button.clicked.connect(lambda: p._add_secret_row("", False))
    form = QFormLayout()
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
    form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
    form.addRow(p._label("mcp.name"), p.name_edit)
    form.addRow("", p.enabled_check)
    form.addRow(p._label("mcp.connection"), p.transport_combo)
    form.addRow(p._label("mcp.command"), p.command_edit)
    form.addRow(p._label("mcp.arguments"), p.args_edit)
    form.addRow(p._label("mcp.cwd"), p.cwd_edit)
    form.addRow(p._label("mcp.environment"), p.env_edit)
    form.addRow(p._label("mcp.url"), p.url_edit)
    form.addRow(p._label("mcp.headers"), p.headers_edit)
    form.addRow("", p.oauth_check)
    form.addRow(p._label("mcp.secrets"), p.secrets_table)
    form.addRow("", p.add_secret_button)
    p._form = form

    # --- Behaviour ------------------------------------------------------------------------------
    p.trusted_check = QCheckBox()
    p.trusted_hint = QLabel()
    p.trusted_hint.setObjectName("Muted")
    p.trusted_hint.setWordWrap(True)
    p.keywords_edit = QLineEdit()
    p.timeout_spin = QDoubleSpinBox()
    p.timeout_spin.setRange(1, 3600)
    behaviour_form = QFormLayout()
    behaviour_form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
    behaviour_form.addRow("", p.trusted_check)
    behaviour_form.addRow("", p.trusted_hint)
    behaviour_form.addRow(p._label("mcp.keywords"), p.keywords_edit)
    behaviour_form.addRow(p._label("mcp.timeout"), p.timeout_spin)

    # --- Tools ----------------------------------------------------------------------------------
    p.tools_table = McpToolsTable()
    p.tools_table.changed.connect(p._edited)
    tools = QWidget()
    tools_layout = QVBoxLayout(tools)
    tools_layout.setContentsMargins(0, 6, 0, 0)
    p.tools_hint = QLabel()
    p.tools_hint.setObjectName("Muted")
    p.tools_hint.setWordWrap(True)
    tools_layout.addWidget(p.tools_hint)
    tools_layout.addWidget(p.tools_table, 1)

    p.tabs = QTabWidget()
    p.tabs.addTab(_scrolled(form), "")
    p.tabs.addTab(_scrolled(behaviour_form), "")
    p.tabs.addTab(tools, "")

    p.test_button = QPushButton()
    p.test_button.clicked.connect(p.start_test)
    p.reconnect_button = QPushButton()
    p.reconnect_button.clicked.connect(p.reconnect)
    p.reconnect_button.setVisible(False)
    p.json_button = QPushButton()
    p.json_button.clicked.connect(p.open_json)
    p.status_label = QLabel()
    p.status_label.setWordWrap(True)
    p.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    actions = QGridLayout()
    actions.addWidget(p.test_button, 0, 0)
    actions.addWidget(p.reconnect_button, 0, 1)
    actions.addWidget(p.json_button, 0, 2)
    actions.setColumnStretch(3, 1)
    right = QVBoxLayout()
    right.setContentsMargins(0, 0, 0, 0)
    right.addWidget(p.tabs, 1)
    right.addLayout(actions)
    right.addWidget(p.status_label)
    p.editor = QWidget()
    p.editor.setLayout(right)

    splitter = QSplitter()
    splitter.setChildrenCollapsible(False)
    splitter.addWidget(left_widget)
    splitter.addWidget(p.editor)
    splitter.setStretchFactor(1, 3)
    splitter.setSizes([180, 560])
    outer = QVBoxLayout(p)
    outer.setContentsMargins(0, 0, 0, 0)
    outer.addWidget(splitter)

    for edit in (p.name_edit, p.command_edit, p.args_edit, p.cwd_edit, p.url_edit, p.keywords_edit):
        edit.textEdited.connect(p._edited)
    for text in (p.env_edit, p.headers_edit):
        text.textChanged.connect(p._edited)
    for box in (p.enabled_check, p.trusted_check, p.oauth_check):
        box.toggled.connect(p._edited)
    p.timeout_spin.valueChanged.connect(p._edited)
    p.transport_combo.currentIndexChanged.connect(p._transport_changed)
