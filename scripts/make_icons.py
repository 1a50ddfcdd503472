#!/usr/bin/env python3
"""Render the app icon (resources/icons/app.svg, the same the window uses) to the files build.spec embeds:
weclaw.png (Linux), weclaw.ico (Windows) and weclaw.icns (macOS), and the Linux menu icons in
resources/linux/ (128, 256 and 512 px PNGs and the coloured SVG the install script puts into the hicolor
theme). Run again after changing app.svg.

    python scripts/make_icons.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtGui import QGuiApplication  # noqa: E402

from weclaw_desktop.ui.icons import pixmap  # noqa: E402

ACCENT = "#2f6feb"  # the colour icons.app_icon() uses
OUTPUTS = {"weclaw.png": 512, "weclaw.ico": 256, "weclaw.icns": 512}
LINUX_SIZES = (128, 256, 512)


def main() -> int:
    app = QGuiApplication.instance() or QGuiApplication([])
    folder = ROOT / "resources" / "icons"
    for name, size in OUTPUTS.items():
        target = folder / name
        if not pixmap("app", size, ACCENT).save(str(target), name.rsplit(".", 1)[1].upper()):
            print(f"could not write {target}", file=sys.stderr)
            return 1
        print(f"{target.relative_to(ROOT)}: {size}x{size}, {target.stat().st_size} bytes")
    linux = ROOT / "resources" / "linux"
    for size in LINUX_SIZES:
        target = linux / f"weclaw-desktop-{size}.png"
        image = pixmap("app", size, ACCENT).toImage().scaled(size, size)  # exactly size px, whatever the screen's DPR
        if not image.save(str(target), "PNG"):
            print(f"could not write {target}", file=sys.stderr)
            return 1
        print(f"{target.relative_to(ROOT)}: {size}x{size}, {target.stat().st_size} bytes")
    svg = (folder / "app.svg").read_text(encoding="utf-8").replace("currentColor", ACCENT)
    (linux / "weclaw-desktop.svg").write_text(svg, encoding="utf-8")
    del app
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
