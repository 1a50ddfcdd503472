"""The tool panel's rows for the tools of an MCP server: a switch and an approval mode per server tool.

Under the row of an MCP server (one dynamic tool ``mcp_<server>``) each tool the server lists gets a child
row: its check box switches it on or off (off = ``deny``: never offered) and its box picks the approval
mode (Automatic, from the tool's annotations and the server's trust; Ask first; Allow without asking) —
the same setting, ``McpServerSettings.tool_approval``, as the MCP page's Tools tab. A change calls
``on_mode(server, tool, mode)`` (mode ``""`` = automatic); the window saves it through the settings store,
the MCP manager applies it, and the rows follow the server's new catalogue. Rows are remade only when the
catalogue (names, modes, offered or not) changed, so live call updates cost nothing here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Literal

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QTreeWidget, QTreeWidgetItem

from weclaw_desktop.i18n import tr
from weclaw_desktop.mcp.tool import ServerToolInfo
from weclaw_desktop.settings import McpServerSettings, SettingsStore
from weclaw_desktop.toolkit.registry import ToolRegistry

log = logging.getLogger("weclaw.ui.tool_panel")

SERVER_TOOL_ROLE = Qt.ItemDataRole.UserRole + 3  # (server, server tool name) of a child row
MODES = ("", "ask", "allow")  # '' = automatic; "deny" is the switch

OnMode = Callable[[str, str, str], None]
COMPACT = "QComboBox { padding: 0px 8px; border-radius: 4px; }"
_MODE_VALUES: dict[str, Literal["ask", "allow", "deny"]] = {"ask": "ask", "allow": "allow", "deny": "deny"}


def catalogue_of(registry: ToolRegistry, tool: str) -> tuple[str, list[ServerToolInfo]] | None:
    """(server, its tools) when ``tool`` is a loaded MCP server tool, else None."""
    if not registry.is_dynamic(tool):
        return None
    server = registry.spec(tool).config.get("server")
    try:
        catalogue = getattr(registry.get(tool), "catalogue", None)
    except Exception:  # a tool that cannot be loaded has no rows to show
        return None
    if not isinstance(server, str) or not callable(catalogue):
        return None
    return server, list(catalogue())


class McpRows:
    """Keeps the child rows of MCP server items in step with each server's catalogue."""

    def __init__(self, tree: QTreeWidget, registry: ToolRegistry, on_mode: OnMode | None) -> None:
        self.tree = tree
        self.registry = registry
        self.on_mode = on_mode
        self._shown: dict[str, tuple[object, ...]] = {}  # tool -> signature of the rows it shows
        self._loading = False

    def forget(self, tool: str) -> None:
        self._shown.pop(tool, None)

    def reset(self) -> None:
        """The tree was cleared: every row is made again on the next paint."""
        self._shown.clear()

    def sync(self, item: QTreeWidgetItem, tool: str) -> None:
        """Make ``item``'s child rows match the server's tools (nothing to do when unchanged)."""
        found = catalogue_of(self.registry, tool) if self.on_mode is not None else None
        if found is None:
            if item.childCount():
                item.takeChildren()
            self._shown.pop(tool, None)
            return
        server, tools = found
        signature = (server, tr("mcp.mode.auto"), *((t.name, t.mode, bool(t.function), t.risk) for t in tools))
        if self._shown.get(tool) == signature:
            return
        self._shown[tool] = signature
        self._loading = True
        try:
            item.takeChildren()
            for info in tools:
                self._add(item, server, info)
        finally:
            self._loading = False

    def _add(self, parent: QTreeWidgetItem, server: str, info: ServerToolInfo) -> None:
        child = QTreeWidgetItem([info.name, ""])
        child.setData(0, SERVER_TOOL_ROLE, (server, info.name))
        on = info.mode != "deny"
        usable = bool(info.function) or not on  # a tool the server cannot offer stays greyed (see the MCP page)
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable
        child.setFlags(flags if usable else Qt.ItemFlag.NoItemFlags)
        child.setCheckState(0, Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
        tip = "\n".join(t for t in (info.description, info.function, tr(f"risk.{info.risk}") if info.risk else "") if t)
        child.setToolTip(0, tip)
        parent.addChild(child)
        combo = QComboBox()
        combo.setStyleSheet(COMPACT)  # fits the tree's uniform row height (the theme's padding is for forms)
        for mode in MODES:
            combo.addItem(tr(f"mcp.mode.{mode or 'auto'}"), mode)
        combo.setCurrentIndex(max(0, combo.findData(info.mode if on else "")))
        combo.setEnabled(on and usable)
        combo.setToolTip(tip)
        combo.currentIndexChanged.connect(lambda _i, c=combo, s=server, n=info.name: self._mode(s, n, c))
        self.tree.setItemWidget(child, 1, combo)

    def combo(self, child: QTreeWidgetItem) -> QComboBox | None:
        widget = self.tree.itemWidget(child, 1)
        return widget if isinstance(widget, QComboBox) else None

    def switched(self, child: QTreeWidgetItem) -> bool:
        """A child row's check box changed (True when ``child`` is such a row)."""
        target = child.data(0, SERVER_TOOL_ROLE)
        if not target:
            return False
        if self._loading or self.on_mode is None:
            return True
        server, name = target
        on = child.checkState(0) == Qt.CheckState.Checked
        combo = self.combo(child)
        mode = str(combo.currentData() or "") if (on and combo is not None) else ("" if on else "deny")
        if combo is not None:
            combo.setEnabled(on)
        self.on_mode(str(server), str(name), mode)
        return True

    def _mode(self, server: str, name: str, combo: QComboBox) -> None:
        if not self._loading and self.on_mode is not None and combo.isEnabled():
            self.on_mode(server, name, str(combo.currentData() or ""))


def set_tool_mode(servers: list[McpServerSettings], server: str, tool: str, mode: str) -> bool:
    """In the settings' ``mcp_servers``: set ``tool``'s approval mode on ``server`` ('' removes it, so it is
    automatic). False when there is no such server (removed meanwhile)."""
    for entry in servers:
        if entry.name == server:
            value = _MODE_VALUES.get(mode)
            if value is not None:
                entry.tool_approval[tool] = value
            else:
                entry.tool_approval.pop(tool, None)
            return True
    return False


def mode_saver(store: SettingsStore, notice: Callable[[str, str], None], refresh: Callable[[], None]) -> OnMode:
    """The panel's ``on_mode``: saved through the settings store (the only writer of settings.json; the MCP
    manager applies the change as it does for the MCP page). A failed write is a notice, and the rows go back."""

    def save(server: str, tool: str, mode: str) -> None:
        try:
            store.update(lambda settings: set_tool_mode(settings.mcp_servers, server, tool, mode))
        except OSError as exc:
            log.error("MCP tool mode not saved: %s", exc)
            notice(tr("settings.invalid", message=exc.strerror or str(exc)), "error")
            refresh()

    return save
