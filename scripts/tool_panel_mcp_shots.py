"""Screenshots of the tool panel with an MCP server's tools (a switch and an approval mode each), in
English and Chinese, light and dark, narrow and wide.

    xvfb-run -a -s "-screen 0 1400x900x24" env QT_QPA_PLATFORM=xcb PYTHONPATH=. python scripts/tool_panel_mcp_shots.py OUT

Starts tests/mcp/mcp_test_server.py as a real stdio server (one tool switched off, one set to "Ask first")
and writes PNGs to OUT (default /tmp/tool-panel-mcp-shots). Uses a throwaway WECLAW_HOME.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("WECLAW_HOME", tempfile.mkdtemp(prefix="panel-shots-"))


async def shoot(out: Path) -> list[Path]:
    from PySide6.QtWidgets import QApplication

    from weclaw_desktop.i18n import set_language
    from weclaw_desktop.mcp import McpManager, ServerState
    from weclaw_desktop.settings import McpServerSettings
    from weclaw_desktop.toolkit.policy import Policy
    from weclaw_desktop.toolkit.registry import ToolRegistry
    from weclaw_desktop.ui import theme
    from weclaw_desktop.ui.tool_board import ToolBoard
    from weclaw_desktop.ui.tool_panel import ToolPanel

    registry = ToolRegistry.from_path()
    manager = McpManager(registry, log_dir=out / "logs")
    server = McpServerSettings(
        name="test",
        command=sys.executable,
        args=[str(ROOT / "tests" / "mcp" / "mcp_test_server.py")],
        tool_approval={"crash": "deny", "place_order": "ask"},
    )
    manager.start(server)
    for _ in range(200):
        conn = manager.connection("test")
        if conn is not None and conn.state is ServerState.CONNECTED:
            break
        await asyncio.sleep(0.1)
    board = ToolBoard(registry, policy=Policy)
    shots: list[Path] = []
    try:
        for lang in ("en", "zh"):
            for mode in ("light", "dark"):
                set_language(lang)
                app = QApplication.instance()
                assert isinstance(app, QApplication)
                theme.apply_theme(app, mode)
                for width in (360, 620):
                    panel = ToolPanel(board, on_switch=lambda *_: None, on_mcp_mode=lambda *_: None)
                    panel.resize(width, 860)
                    panel.show()
                    item = panel.item_for("mcp_test")
                    item.setExpanded(True)
                    panel.tree.scrollToBottom()
                    for _ in range(8):
                        app.processEvents()
                        await asyncio.sleep(0.05)
                    panel.tree.scrollToBottom()
                    app.processEvents()
                    path = out / f"panel-mcp-{lang}-{mode}-{width}.png"
                    panel.grab().save(str(path))
                    shots.append(path)
                    panel.close()
    finally:
        await manager.stop_all()
    return shots


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/tool-panel-mcp-shots")
    out.mkdir(parents=True, exist_ok=True)
    from PySide6.QtWidgets import QApplication

    app = QApplication(sys.argv[:1])  # asyncio drives the test server; Qt events are pumped while shooting
    for path in asyncio.run(shoot(out)):
        print(path)
    app.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
