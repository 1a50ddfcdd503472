"""Render the notice of a settings save that could not be written, in English and Chinese, light and dark.

    python scripts/settings_write_shots.py OUT_DIR [--lang en,zh] [--theme light,dark]

The real window on a settings folder that refuses writes: a tmpfs remounted read-only (Linux, as root;
unmounted after), else a folder without write permission (not as root). A tool is switched off in the
tool panel: the switch stays in use and the banner above the chat names the file and why. Runs offscreen
(set QT_QPA_PLATFORM=xcb under ``xvfb-run`` for a real X11 window).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("LANG", "C.UTF-8")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "scripts")]


@contextlib.contextmanager
def read_only_home() -> Iterator[Path]:
    """A WECLAW_HOME whose config folder holds a settings.json and cannot be written to."""
    base = Path(tempfile.mkdtemp(prefix="weclaw-shots-ro-"))
    config = base / "home" / "config"
    mounted = False
    if sys.platform == "linux" and os.geteuid() == 0:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(base)]).returncode == 0
    config.mkdir(parents=True)
    (config / "settings.json").write_text(json.dumps({"version": 1}), encoding="utf-8")
    if mounted:
        subprocess.run(["mount", "-o", "remount,ro", str(base)], check=True)
    else:
        config.chmod(0o555)
    try:
        yield base / "home"
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(base)], check=False)
        else:
            config.chmod(0o755)


async def shots(out: Path, langs: list[str], themes: list[str]) -> list[Path]:
    from PySide6.QtWidgets import QApplication

    from weclaw_desktop.i18n import set_language
    from weclaw_desktop.paths import app_paths
    from weclaw_desktop.settings import SettingsStore
    from weclaw_desktop.ui import theme
    from weclaw_desktop.ui.boot import build_window

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    made: list[Path] = []
    for lang in langs:
        for theme_name in themes:
            set_language(lang)
            theme.apply_theme(app, theme_name)
            with read_only_home() as home:
                window = build_window(SettingsStore.open(app_paths(home)))
                window.resize(1100, 720)
                window.show()
                tool = window.registry.tool_names()[0]
                window.switch_tool(tool, False)
                for _ in range(100):
                    await asyncio.sleep(0.05)
                    if window.write_banner.isVisible():
                        break
                await asyncio.sleep(0.2)
                path = out / f"settings-not-saved-{lang}-{theme_name}.png"
                window.grab().save(str(path))
                made.append(path)
                window.quit_app()
                await window.controller.shutdown()
                window.deleteLater()
                await asyncio.sleep(0.05)
    return made


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--lang", default="en,zh")
    parser.add_argument("--theme", default="light,dark")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    from shotkit import run_scene

    for path in run_scene(lambda: shots(args.out, args.lang.split(","), args.theme.split(",")), prefix="weclaw-shots-"):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
