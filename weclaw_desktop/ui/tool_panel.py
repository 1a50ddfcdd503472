"""The tool panel (a dock): tools by category with their state and live calls, and a Calls tab.

It draws a :class:`ToolBoard`; it never computes availability itself. The per-tool check box is the
user's switch: toggling it calls ``on_switch(tool, enabled)`` (the window saves it to the settings and
the policy enforces it) and the board is refreshed. An MCP server's row holds a row per server tool with
its own switch and approval mode (``ui/tool_panel_mcp.py``; ``on_mcp_mode(server, tool, mode)``).
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable, Iterable

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QIcon
from PySide6.QtWidgets import (
    QDockWidget,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from weclaw_desktop.i18n import has, pick, tr
from weclaw_desktop.toolkit.audit import AuditRecord
from weclaw_desktop.toolkit.diagnostics import Code, Diagnostic, human_text
from weclaw_desktop.toolkit.effects import declared_effects
from weclaw_desktop.toolkit.manifest import Effect, ToolSpec
from weclaw_desktop.ui import icons, theme
from weclaw_desktop.ui.call_text import call_status_text, format_seconds, progress_message
from weclaw_desktop.ui.tool_board import CallInfo, ToolBoard
from weclaw_desktop.ui.tool_panel_mcp import McpRows, OnMode

__all__ = ["ToolPanel", "call_status_text", "category_name", "diagnostic_text", "format_seconds", "progress_message"]

TOOL_ROLE = Qt.ItemDataRole.UserRole + 1
FLUSH_MS = 40
CALL_ROLE = Qt.ItemDataRole.UserRole + 2
NAME_PAD = 26  # px after the widest tool name (item padding, check box and icon spacing)


def diagnostic_text(d: Diagnostic) -> tuple[str, str]:
    """(why, what to do) in the UI language: see :func:`weclaw_desktop.toolkit.diagnostics.human_text`."""
    return human_text(d)


def category_name(category: str) -> str:
    key = f"category.{category}"
    return tr(key) if has(key) else category.replace("_", " ").capitalize()


class ToolPanel(QDockWidget):
    call_activated = Signal(str, str)  # session id, call id: a call double-clicked (or Enter) in the Calls tab

    def __init__(
        self,
        board: ToolBoard,
        *,
        on_switch: Callable[[str, bool], None],
        load_calls: Callable[[], None] | None = None,
        on_mcp_mode: OnMode | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("ToolPanel")
        self.board = board
        self._on_switch = on_switch
        self._load_calls = load_calls
        self._items: dict[str, QTreeWidgetItem] = {}
        self._categories: dict[str, QTreeWidgetItem] = {}
        self._updating = False

        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(8, 4, 8, 8)
        layout.setSpacing(6)
        self.tabs = QTabWidget()
        layout.addWidget(self.tabs)

        tools_page = QWidget()
        tl = QVBoxLayout(tools_page)
        tl.setContentsMargins(0, 6, 0, 0)
        tl.setSpacing(6)
        self.filter = QLineEdit()
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._apply_filter)
        tl.addWidget(self.filter)
        self.tree = QTreeWidget()
        self.tree.setColumnCount(2)
        self.tree.setHeaderHidden(True)
        self.tree.setRootIsDecorated(False)
        self.tree.setIndentation(8)
        self.tree.setUniformRowHeights(True)
        self.tree.setIconSize(icons.icon_size(18))
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.tree.itemChanged.connect(self._item_changed)
        self.mcp_rows = McpRows(self.tree, board.registry, on_mcp_mode)
        tl.addWidget(self.tree, 1)
        self.counter = QLabel()
        self.counter.setObjectName("Muted")
        tl.addWidget(self.counter)
        self.tabs.addTab(tools_page, "")

        self.calls = QTreeWidget()
        self.calls.setRootIsDecorated(False)
        self.calls.setColumnCount(4)
        self.calls.setIndentation(0)
        self.calls.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.calls.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # the dock is narrow: time and status keep their width, the function name elides, and an error
        # is shown on its own line under its call (column 3 keeps it for the tooltip and for tests)
        calls_header = self.calls.header()
        calls_header.setStretchLastSection(False)
        calls_header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        calls_header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        calls_header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.calls.setColumnHidden(3, True)
        self.calls.itemActivated.connect(self._call_activated)  # Enter (and a click where the style activates)
        self.calls.itemDoubleClicked.connect(self._call_activated)
        self._last_activation: tuple[int, float] = (0, 0.0)
        self.tabs.addTab(self.calls, "")
        self.tabs.currentChanged.connect(self._tab_changed)
        self.setWidget(body)

        self._ticker = QTimer(self)
        self._ticker.setInterval(250)
        self._ticker.timeout.connect(self._tick)
        # board changes are batched: 50 parallel calls or 300 tools registered one by one repaint once per
        # FLUSH_MS, each tool row in place
        self._dirty: set[str] = set()
        self._dirty_all = False
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(FLUSH_MS)
        self._flush_timer.timeout.connect(self.flush)
        board.subscribe(self._board_changed)
        self._records: list[AuditRecord] = []
        self.retranslate()

    def retranslate(self) -> None:
        self.setWindowTitle(tr("panel.title"))
        self.toggleViewAction().setText(tr("action.tools"))  # the toolbar button; Qt resets it to the title
        self.filter.setPlaceholderText(tr("panel.filter"))
        self.tabs.setTabText(0, tr("panel.tab.tools"))
        self.tabs.setTabText(1, tr("panel.tab.calls"))
        self.calls.setHeaderLabels(
            [tr("panel.calls.when"), tr("panel.calls.function"), tr("panel.calls.status"), tr("panel.calls.error")]
        )
        self.rebuild()  # tool names, categories, states and tooltips
        if self._records:
            self.show_calls(self._records)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    # --- tree -----------------------------------------------------------------------------------
    def rebuild(self) -> None:
        """Every row made again (language or theme changed)."""
        self._updating = True
        try:
            self.tree.clear()
            self._items.clear()
            self._categories.clear()
            self.mcp_rows.reset()
            registry = self.board.registry
            for name in registry.tool_names(include_disabled=True):
                self._add_item(name, registry.spec(name))
        finally:
            self._updating = False
        self._fit_names()
        self._update_items(self._items)
        self._apply_filter(self.filter.text())

    def _add_item(self, name: str, spec: ToolSpec) -> QTreeWidgetItem:
        category = spec.display.category
        parent = self._categories.get(category)
        if parent is None:
            parent = QTreeWidgetItem([category_name(category), ""])
            font = parent.font(0)
            font.setBold(True)
            parent.setFont(0, font)
            parent.setFlags(Qt.ItemFlag.ItemIsEnabled)
            parent.setForeground(0, QBrush(QColor(theme.colors().muted)))
            self.tree.addTopLevelItem(parent)
            parent.setFirstColumnSpanned(True)
            parent.setExpanded(True)
            self._categories[category] = parent
        item = QTreeWidgetItem([pick(spec.display.name), ""])
        item.setData(0, TOOL_ROLE, name)
        item.setIcon(0, icons.icon(spec.display.icon))
        parent.addChild(item)
        self._items[name] = item
        return item

    def _fit_names(self) -> None:
        # the names column fits its widest name; Qt's own fit leaves out the styled check box's margin
        header = self.tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Fixed)
        fm = self.tree.fontMetrics()
        widest = max((fm.horizontalAdvance(item.text(0)) for item in self._items.values()), default=0)
        # indentation + check box + icon + gaps + the name
        header.resizeSection(0, self.tree.indentation() + 22 + self.tree.iconSize().width() + widest + NAME_PAD)

    def _board_changed(self, changed: set[str]) -> None:
        if changed:
            self._dirty |= changed
        else:
            self._dirty_all = True
        if not self._flush_timer.isActive():
            self._flush_timer.start()

    def flush(self) -> None:
        """Apply the batched board changes: add and remove tool rows in place, repaint the changed ones."""
        self._flush_timer.stop()
        changed, everything = self._dirty, self._dirty_all
        self._dirty, self._dirty_all = set(), False
        if everything:
            names = self.board.registry.tool_names(include_disabled=True)
            if set(self._items) != set(names):
                self._sync_items(names)
            changed = set(self._items)
        self._update_items(changed)

    def _sync_items(self, names: list[str]) -> None:
        """Add the rows of new tools and remove the rows of tools that are gone, keeping the rest."""
        registry = self.board.registry
        wanted = set(names)
        self._updating = True
        try:
            for name in [n for n in self._items if n not in wanted]:
                item = self._items.pop(name)
                self.mcp_rows.forget(name)
                parent = item.parent()
                if parent is not None:
                    parent.removeChild(item)
            for name in names:
                if name not in self._items:
                    self._add_item(name, registry.spec(name))
            for category, parent in list(self._categories.items()):
                if parent.childCount() == 0:
                    self.tree.takeTopLevelItem(self.tree.indexOfTopLevelItem(parent))
                    del self._categories[category]
        finally:
            self._updating = False
        self._fit_names()
        self._apply_filter(self.filter.text())

    def _update_items(self, names: Iterable[str]) -> None:
        self._updating = True
        try:
            for name in names:
                item = self._items.get(name)
                row = self.board.rows.get(name)
                if item is None or row is None:
                    continue
                self._paint(item, name)
        finally:
            self._updating = False
        running = self.board.running_count()
        self.counter.setText(
            tr("panel.calls_count", n=self.board.total_calls())
            + " · "
            + tr("panel.running_count", n=running)
            + "   ·   "
            + tr(
                "panel.summary",
                available=sum(1 for r in self.board.rows.values() if r.state in ("available", "exposed")),
                total=len(self.board.rows),
            )
        )
        if running and not self._ticker.isActive():
            self._ticker.start()
        elif not running:
            self._ticker.stop()

    def _paint(self, item: QTreeWidgetItem, name: str) -> None:
        row = self.board.rows[name]
        spec = self.board.registry.spec(name)
        c = theme.colors()
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if spec.enabled:
            flags |= Qt.ItemFlag.ItemIsUserCheckable
        item.setFlags(flags)
        if spec.enabled:
            item.setCheckState(0, Qt.CheckState.Unchecked if row.state == "off" else Qt.CheckState.Checked)
        call = row.active[-1] if row.active else row.last
        if call is not None and (not call.finished or row.state in ("exposed", "available")):
            text = call_status_text(call, compact=True)
            color = theme.status_color(call.status)
            item.setIcon(1, icons.status_icon(call.status))
        else:
            text = tr(f"panel.state.{row.state}")
            color = {"exposed": c.accent, "available": c.success, "hidden": c.muted, "off": c.muted}[row.state]
            item.setIcon(1, QIcon(icons.status_icon("queued")) if row.state == "exposed" else QIcon())
        # a tool that was called shows its last call's status (the tooltip says whether it is offered):
        # "Offered now · Succeeded · 75 ms" would not fit the narrow dock
        item.setText(1, text)
        item.setForeground(1, QBrush(QColor(color)))
        item.setForeground(0, QBrush(QColor(c.muted if row.state in ("hidden", "off") else c.text)))
        tip = self.tooltip_for(name)
        item.setToolTip(0, tip)
        item.setToolTip(1, tip)
        self.mcp_rows.sync(item, name)  # an MCP server's tools: a switch and an approval mode each

    def tooltip_for(self, name: str) -> str:
        row = self.board.rows[name]
        spec = self.board.registry.spec(name)
        lines = [f"<b>{pick(spec.display.name)}</b> <span style='color:gray'>({name})</span>", pick(spec.description)]
        locked = any(d.code is Code.DISABLED_SETTINGS_UNREADABLE for d in row.diagnostics)
        if row.state == "hidden" or locked:  # locked: "off", but not by the user - say why
            for d in row.diagnostics:
                why, hint = diagnostic_text(d)
                lines.append(tr("panel.tip.why", reason=f"{why} [{d.code.value}]"))
                if hint:
                    lines.append(tr("panel.tip.todo", hint=hint))
        else:
            lines.append(tr(f"panel.tip.{row.state}"))
        call = row.active[-1] if row.active else row.last
        if call is not None:
            lines.append(html.escape(call_status_text(call)))
        if row.calls:
            lines.append(tr("panel.tip.calls", n=row.calls))
        lines.append(self._effects_line(name))
        return "<br>".join(lines)

    def _effects_line(self, name: str) -> str:
        """What the tool can do beyond WeClaw and whether its results are trusted (tools.json's safety)."""
        effects, trust = declared_effects(self.board.registry, name)
        listed = ", ".join(tr(f"effect.{e.value}") for e in Effect if e in effects) or tr("effect.none")
        trusted = tr(f"effect.{trust.value}")
        return f"<span style='color:gray'>{tr('effect.title')}: {html.escape(listed)} · {html.escape(trusted)}</span>"

    def _item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        if self._updating or column != 0:
            return
        if self.mcp_rows.switched(item):
            return
        name = item.data(0, TOOL_ROLE)
        if not name:
            return
        enabled = item.checkState(0) == Qt.CheckState.Checked
        if enabled == (self.board.rows[name].state != "off"):
            return
        self._on_switch(str(name), enabled)
        self.board.refresh()

    def _apply_filter(self, text: str) -> None:
        needle = text.strip().lower()
        for parent in self._categories.values():
            shown = 0
            for i in range(parent.childCount()):
                child = parent.child(i)
                if child is None:
                    continue
                name = str(child.data(0, TOOL_ROLE))
                spec = self.board.registry.spec(name)
                haystack = " ".join(
                    [name, spec.display.name.en, spec.display.name.zh, spec.description.en, spec.description.zh]
                ).lower()
                hide = bool(needle) and needle not in haystack
                child.setHidden(hide)
                shown += not hide
            parent.setHidden(shown == 0)

    def _tick(self) -> None:
        self._update_items([r.name for r in self.board.rows.values() if r.active])

    # --- calls tab ------------------------------------------------------------------------------
    def _tab_changed(self, index: int) -> None:
        if self.tabs.widget(index) is self.calls and self._load_calls is not None:
            self._load_calls()

    def _call_activated(self, item: QTreeWidgetItem, _column: int) -> None:
        now = time.monotonic()
        if self._last_activation[0] == id(item) and now - self._last_activation[1] < 0.5:
            return  # a double-click that the style also reported as an activation
        self._last_activation = (id(item), now)
        parent = item.parent()
        target = item.data(0, CALL_ROLE) or (parent.data(0, CALL_ROLE) if parent is not None else None)
        if target:
            session_id, call_id = target
            self.call_activated.emit(str(session_id), str(call_id))

    def show_calls(self, records: list[AuditRecord]) -> None:
        """Fill the Calls tab from audit records (newest first)."""
        self._records = records
        self.calls.clear()
        for rec in sorted(records, key=lambda r: r.started_at, reverse=True):
            when = time.strftime("%H:%M:%S", time.localtime(rec.started_at))
            call = CallInfo(rec.call_id, rec.function, rec.tool, rec.action, status=str(rec.status))
            call.set_times(rec.duration_ms, rec.waited_ms)  # running time apart from the approval wait, as on cards
            status = call_status_text(call)
            item = QTreeWidgetItem([when, rec.function, status, rec.error_summary])
            item.setData(0, CALL_ROLE, (rec.session_id, rec.call_id))
            item.setIcon(2, icons.status_icon(rec.status))
            item.setForeground(2, QBrush(QColor(theme.status_color(rec.status))))
            tip = f"{rec.function} · {status}"
            if rec.error_summary:
                tip += f"\n{rec.error_summary}"
            for col in range(4):
                item.setToolTip(col, tip)
            self.calls.addTopLevelItem(item)
            if rec.error_summary:
                line = QTreeWidgetItem([rec.error_summary.splitlines()[0] if rec.error_summary.strip() else ""])
                line.setFlags(Qt.ItemFlag.ItemIsEnabled)
                line.setToolTip(0, tip)
                line.setForeground(0, QBrush(QColor(theme.status_color(rec.status))))
                item.addChild(line)
                line.setFirstColumnSpanned(True)
                item.setExpanded(True)

    # --- test and screenshot helpers ------------------------------------------------------------
    def status_text(self, tool: str) -> str:
        self.flush()  # what the panel shows once its batched update has run
        return self._items[tool].text(1)

    def item_for(self, tool: str) -> QTreeWidgetItem:
        self.flush()
        return self._items[tool]
