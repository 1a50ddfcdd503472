"""Render what a user sees when settings.json has problems: the notice above the chat, the tool panel with
tools locked by an unreadable deny list, and the MCP page with unusable entries, in English and Chinese,
light and dark, at a small and a large window width.

    python scripts/shot_settings_problems.py OUT_DIR

Runs offscreen (or under ``xvfb-run`` with QT_QPA_PLATFORM=xcb). Everything lives in a fresh temp
WECLAW_HOME; the settings file is written by hand, the way a user (or an old version) left it.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("LANG", "C.UTF-8")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

BROKEN = {
    "version": 1,
    "provider": {"preset": "deepseek", "base_url": "http://127.0.0.1:9/v1", "model": "deepseek-chat"},
    "agent": {"max_rounds": "ten", "approvals": {"rules": {"gui": {"medium": "sometimes"}}}},
    "tools": {"policy": {"deny": "shell", "disabled": ["clipboard"]}, "allowed_roots": ["~/Documents"]},
    "mcp_servers": [
        {"name": "time", "command": "uvx", "args": ["mcp-server-time"]},
        {"name": "legacy-search", "transport": "sse", "url": "https://old.example.com/sse"},
        {"name": "a-very-long-server-name-from-cursor-config", "command": "npx"},
    ],
}


async def shoot(out: Path, lang: str, theme_name: str, width: int) -> list[Path]:
    from PySide6.QtWidgets import QApplication

    from weclaw_desktop.app.services import AppServices
    from weclaw_desktop.i18n import set_language
    from weclaw_desktop.paths import app_paths
    from weclaw_desktop.settings import SettingsStore
    from weclaw_desktop.ui import theme
    from weclaw_desktop.ui.boot import build_window

    set_language(lang)
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    theme.apply_theme(app, theme_name)
    path = app_paths().ensure().settings_file
    path.write_text(json.dumps(BROKEN, indent=1), encoding="utf-8")
    store = SettingsStore.open()
    window = build_window(store, tools_json=ROOT / "tools.json")
    services = AppServices(window, app_paths())
    window.resize(width, 760)
    window.show()
    await asyncio.sleep(0.3)
    tag = f"{lang}-{theme_name}-{width}"
    shots = [out / f"notice-{tag}.png"]
    window.grab().save(str(shots[0]))
    dialog = window.open_settings()
    dialog.show_page(len(dialog.pages) - 1)  # the MCP page (added last by the services)
    services.mcp_page.server_list.setCurrentRow(1)
    await asyncio.sleep(0.2)
    shots.append(out / f"mcp-page-{tag}.png")
    dialog.grab().save(str(shots[1]))
    dialog.reject()
    await services.stop()
    window.quit_app()
    window.deleteLater()
    await asyncio.sleep(0.05)
    path.unlink()
    for copy in path.parent.glob("settings.broken-*.json"):
        copy.unlink()
    return shots


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "shots").resolve()
    out.mkdir(parents=True, exist_ok=True)
    os.environ["WECLAW_HOME"] = tempfile.mkdtemp(prefix="weclaw-shots-")
    from PySide6.QtWidgets import QApplication

    from weclaw_desktop.ui.qtloop import WeclawEventLoop

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)  # type: ignore[attr-defined]
    loop = WeclawEventLoop(app)
    asyncio.set_event_loop(loop)
    made: list[Path] = []
    with loop:
        for lang in ("en", "zh"):
            for theme_name in ("light", "dark"):
                for width in (900, 1400):
                    made += loop.run_until_complete(shoot(out, lang, theme_name, width))
    for shot in made:
        print(shot)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
