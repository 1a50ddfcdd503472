"""Scroll a stored 1,000-message chat on a real X11 display with the mouse wheel and take screenshots.

    xvfb-run -a -s "-screen 0 1400x900x24" python scripts/scroll_shots.py OUT_DIR [--rows 1000] [--theme light]

(QT_QPA_PLATFORM is set to xcb; ``openbox`` is the window manager.) The chat is written through the real
history store (bench/ui_chat_data.py), the window opens it at start-up, then xdotool turns the wheel up in
bursts (15 notches 16 ms apart) and drags the scroll bar; after each burst a screenshot is taken at once
(blank gaps would show there) and another 400 ms later: the script compares the chat area of the two and
prints how many pixels changed — idle work (measuring, making widgets ahead) must not move what is on
screen ("no jumping"). Then the whole window is repainted from scratch and shot again: what the chat
showed must equal a fresh paint (the column repaints only what moved, so a stale region would show
here). Screenshots: ``<n>-<what>.png`` in OUT_DIR. Nothing touches the real home.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ["QT_QPA_PLATFORM"] = "xcb"
os.environ.setdefault("LANG", "C.UTF-8")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "bench")]


async def xdo(*args: str) -> None:
    """xdotool without blocking the Qt loop: the app scrolls and paints while the wheel turns."""
    proc = await asyncio.create_subprocess_exec("xdotool", *args)
    await proc.wait()


async def shot(path: Path) -> None:
    proc = await asyncio.create_subprocess_exec("import", "-window", "root", str(path))
    await proc.wait()


def changed_pixels(a: Path, b: Path, rect: tuple[int, int, int, int]) -> int:
    from PySide6.QtGui import QImage

    x, y, w, h = rect
    ia, ib = QImage(str(a)).copy(x, y, w, h), QImage(str(b)).copy(x, y, w, h)
    return sum(1 for yy in range(0, h, 2) for xx in range(0, w, 2) if ia.pixel(xx, yy) != ib.pixel(xx, yy))


async def open_big_chat(rows: int, theme_name: str) -> tuple[Any, Any, Any]:
    from PySide6.QtWidgets import QApplication
    from ui_chat_data import seed
    from ui_harness import ServerThread, close, make_window, settle

    from weclaw_desktop.app import create_runtime
    from weclaw_desktop.ui.theme import apply_theme

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    apply_theme(app, theme_name)
    home = tempfile.mkdtemp(prefix="weclaw-scroll-shots-")
    server = ServerThread()
    seeder, runtime = await make_window(server.fake, home)
    info = await runtime.create_session("big")
    await seed(runtime.history, info.id, rows)
    await close(seeder)
    window, _ = await make_window(server.fake, home, attach=False)
    window.move(40, 30)
    create_runtime(window, api_key="sk-shots", logs=False)
    await settle(lambda: bool(window.chat.has_content), 60)
    return window, window.chat, server


async def run(out: Path, rows: int, theme_name: str) -> None:
    window, chat, server = await open_big_chat(rows, theme_name)
    await asyncio.sleep(1.5)
    geo = chat.viewport()
    top_left = geo.mapToGlobal(geo.rect().topLeft())
    rect = (top_left.x(), top_left.y(), geo.width(), geo.height())
    cx, cy = top_left.x() + geo.width() // 2, top_left.y() + geo.height() // 2
    await xdo("mousemove", str(cx), str(cy))
    n = 0
    await shot(out / f"{n:02d}-end.png")
    moved: list[str] = []
    for burst in range(6):
        wheel = asyncio.ensure_future(xdo("click", "--repeat", "30", "--delay", "16", "4"))  # wheel up
        await asyncio.sleep(0.25)
        n += 1
        await shot(out / f"{n:02d}-wheel{burst}-while-turning.png")  # mid-burst: gaps would show here
        await wheel
        now = out / f"{n:02d}-wheel{burst}-at-once.png"
        await shot(now)
        await asyncio.sleep(0.4)
        later = out / f"{n:02d}-wheel{burst}-400ms.png"
        await shot(later)
        window.repaint()  # everything painted again: the screen must not change (nothing stale was left)
        await asyncio.sleep(0.1)
        fresh = out / f"{n:02d}-wheel{burst}-repainted.png"
        await shot(fresh)
        moved.append(
            f"wheel burst {burst}: {changed_pixels(now, later, rect)} px changed in the chat after it, "
            f"{changed_pixels(later, fresh, rect)} px differ from a fresh paint"
        )
    # drag the scroll bar a third of the way up
    bar = chat.verticalScrollBar()
    handle = bar.mapToGlobal(bar.rect().center())
    await xdo("mousemove", str(handle.x()), str(bar.mapToGlobal(bar.rect().bottomLeft()).y() - 10))
    await xdo("mousedown", "1")
    await xdo("mousemove", str(handle.x()), str(handle.y() - bar.height() // 3))
    await xdo("mouseup", "1")
    await asyncio.sleep(0.03)
    n += 1
    await shot(out / f"{n:02d}-dragged-at-once.png")
    await asyncio.sleep(0.5)
    await shot(out / f"{n:02d}-dragged-500ms.png")
    window.repaint()
    await asyncio.sleep(0.1)
    await shot(out / f"{n:02d}-dragged-repainted.png")
    dragged = [out / f"{n:02d}-dragged-{w}.png" for w in ("at-once", "500ms", "repainted")]
    moved.append(
        f"drag: {changed_pixels(dragged[0], dragged[1], rect)} px, "
        f"{changed_pixels(dragged[1], dragged[2], rect)} px differ from a fresh paint"
    )
    print("\n".join(moved), flush=True)
    print(f"widgets made {chat.made}, rebound {chat.rebound}, pre-rendered {chat.prerendered}", flush=True)
    window.quit_app()
    await window.controller.shutdown()
    server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--theme", default="light")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    os.environ["WECLAW_HOME"] = tempfile.mkdtemp(prefix="weclaw-scroll-shots-")
    wm = subprocess.Popen(["openbox"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        from weclaw_desktop.ui.boot import qt_application
        from weclaw_desktop.ui.qtloop import WeclawEventLoop

        app = qt_application(sys.argv[:1])
        app.setQuitOnLastWindowClosed(False)
        loop = WeclawEventLoop(app)
        asyncio.set_event_loop(loop)
        with loop:
            loop.run_until_complete(run(args.out, args.rows, args.theme))
    finally:
        wm.terminate()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
