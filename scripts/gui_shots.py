"""Screenshots of #17's states on a real X11 display, driven with xdotool.

    xvfb-run -a -s "-screen 0 2600x1400x24" python scripts/gui_shots.py OUT_DIR --lang en --theme light

(QT_QPA_PLATFORM is set to xcb; ``openbox`` is started as the window manager so focus and key events work
as on a desktop.) It builds the real window on the real tools.json against a local fake OpenAI server,
writes a chat with a produced file, a denied call, a stopped answer and Markdown (table, code, a bare URL,
a sub-list), then: reopens it from another chat, switches the theme live, resizes to 720 and 2560 px,
opens find-in-chat (Ctrl+F), the shortcut overview (Ctrl+/), Settings > Tools (e-mail) and Settings > MCP,
and saves ``import -window root`` PNGs named ``<step>-<lang>-<theme>.png``. Nothing touches the real home.
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

ANSWER_EN = (
    "## The report\n\nI wrote **report.md** with the figures. Details: https://example.com/docs\n\n"
    "- CPU and memory\n  - 4 cores, 35% busy\n  - 7.6 GB free\n- Disk: 120 GB free\n\n"
    "| part | value |\n|---|---:|\n| CPU | 35% |\n| RAM | 7.6 GB |\n\n"
    "```python\nimport psutil\nprint(psutil.cpu_percent())\n```\n\nUse `weclaw doctor` for more."
)
ANSWER_ZH = (
    "## 报告\n\n我已把数据写入 **report.md**。详情：https://example.com/docs\n\n"
    "- 处理器和内存\n  - 4 核，占用 35%\n  - 可用 7.6 GB\n- 磁盘：可用 120 GB\n\n"
    "| 项目 | 数值 |\n|---|---:|\n| 处理器 | 35% |\n| 内存 | 7.6 GB |\n\n"
    "```python\nimport psutil\nprint(psutil.cpu_percent())\n```\n\n更多信息请运行 `weclaw doctor`。"
)


def xdo(*args: str) -> None:
    subprocess.run(["xdotool", *args], check=False, capture_output=True)


class Shots:
    def __init__(self, out: Path, lang: str, theme: str) -> None:
        self.out, self.lang, self.theme = out, lang, theme
        self.saved: list[Path] = []

    async def take(self, name: str) -> None:
        await asyncio.sleep(0.6)  # let the window paint
        path = self.out / f"{name}-{self.lang}-{self.theme}.png"
        await asyncio.to_thread(subprocess.run, ["import", "-window", "root", str(path)], check=True)
        self.saved.append(path)
        print("saved", path, flush=True)


async def run(out: Path, lang: str, theme: str) -> list[Path]:
    from fakeopenai import call, hang_reply, text_reply, tool_reply
    from ui import ServerThread  # bench/ui.py: the fake server in its own thread

    from weclaw_desktop.app import create_runtime
    from weclaw_desktop.i18n import Text
    from weclaw_desktop.settings import Settings
    from weclaw_desktop.ui.boot import build_window, prepare_ui
    from weclaw_desktop.ui.mcp_page import McpPage

    server = ServerThread()
    settings = Settings()
    settings.provider.base_url, settings.provider.model, settings.provider.preset = server.fake.base_url, "m", "custom"
    settings.provider.max_retries = 0
    settings.agent.exposure = "all"
    settings.ui.language, settings.ui.theme = lang, theme
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    prepare_ui(app, settings)  # type: ignore[arg-type]
    window = build_window(settings)
    create_runtime(window, api_key="sk-shots", logs=False)
    window.add_settings_page(Text("category.mcp"), McpPage(window.secrets))
    window.resize(1400, 860)
    window.show()
    await window.controller.idle()
    shots = Shots(out, lang, theme)
    wid = str(int(window.winId()))
    xdo("windowactivate", "--sync", wid)
    xdo("windowmove", wid, "0", "0")
    c = window.controller
    zh = lang == "zh"

    # a chat with everything a restore must bring back
    server.push(
        tool_reply(call("file_write", {"path": "report.md", "content": "# Report\n\nCPU 35%\n"})),
        text_reply(ANSWER_ZH if zh else ANSWER_EN),
    )
    await c.send("检查我的电脑并保存报告" if zh else "check my computer and save a report")
    await _idle(window)
    await _title_asked(server)  # before the next replies are queued: the title request must not take them
    window.gate.listeners.append(lambda dialog: dialog.deny_button.click())
    server.push(
        tool_reply(call("shell_run", {"command": "rm -rf build"})),
        text_reply("好的，不删除。" if zh else "OK, not deleting it."),
    )
    await c.send("删除 build 文件夹" if zh else "delete the build folder")
    await _idle(window)
    window.gate.listeners.clear()
    server.push(hang_reply("这是一个很长的回答，" if zh else "This is a long answer that "))
    await c.send("写一篇长文" if zh else "write a long essay")
    await asyncio.sleep(1.0)
    xdo("key", "--window", wid, "Escape")  # Esc stops
    await _idle(window)
    first = c.session_id
    server.push(text_reply("你好！" if zh else "Hello!"))
    await c.new_session()
    await c.send("你好" if zh else "hello")
    await _idle(window)

    # reopen the first chat from the sidebar
    await c.open_session(first)
    await asyncio.sleep(0.5)
    window.chat.scroll_to_end()
    await shots.take("01-reopened")

    # find in chat
    xdo("key", "--window", wid, "ctrl+f")
    await asyncio.sleep(0.3)
    xdo("type", "--window", wid, "report")
    await asyncio.sleep(0.6)
    await shots.take("02-find")
    xdo("key", "--window", wid, "Escape")

    # shortcut overview
    xdo("key", "--window", wid, "ctrl+slash")
    await shots.take("03-shortcuts")
    if getattr(window, "shortcuts_dialog", None) is not None:
        window.shortcuts_dialog.reject()

    # live theme switch
    other = "dark" if theme == "light" else "light"

    def switch(s: Settings) -> None:
        s.ui.theme = other

    window.store.update(switch)
    await shots.take(f"04-live-theme-to-{other}")

    def back(s: Settings) -> None:
        s.ui.theme = theme

    window.store.update(back)

    # narrow and wide
    xdo("windowsize", wid, "720", "860")
    await asyncio.sleep(0.5)
    window.chat.scroll_to_end()
    await shots.take("05-720px")
    xdo("windowsize", wid, "2560", "1300")
    await asyncio.sleep(0.5)
    window.chat.scroll_to_end()
    await shots.take("06-2560px")
    xdo("windowsize", wid, "1400", "860")

    # Settings > Tools (e-mail) and Settings > MCP at the default size
    xdo("key", "--window", wid, "ctrl+comma")
    await asyncio.sleep(0.5)
    dialog = window.settings_dialog
    if dialog is not None:
        dialog.show_target("tools", "email")
        await shots.take("07-settings-tools-email")
        dialog.show_target("mcp")
        await shots.take("08-settings-mcp")
        dialog.reject()

    window.quit_app()
    await window.controller.shutdown()
    server.stop()
    return shots.saved


async def _title_asked(server: Any, limit_s: float = 5.0) -> None:
    """Until the chat's title request (the one without tools, sent after a chat's first exchange) was made."""
    for _ in range(int(limit_s / 0.05)):
        if any(not r.get("tools") for r in server.fake.requests):
            return
        await asyncio.sleep(0.05)


async def _idle(window: Any) -> None:
    for _ in range(400):
        if not window.composer.busy:
            break
        await asyncio.sleep(0.05)
    await window.controller.idle()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--lang", default="en")
    parser.add_argument("--theme", default="light")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="weclaw-shots-"))
    os.environ["WECLAW_HOME"] = str(home / "data")
    os.environ["HOME"] = str(home)
    wm = subprocess.Popen(["openbox"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        from weclaw_desktop.ui.boot import qt_application
        from weclaw_desktop.ui.qtloop import WeclawEventLoop

        app = qt_application(sys.argv[:1])
        app.setQuitOnLastWindowClosed(False)
        loop = WeclawEventLoop(app)
        asyncio.set_event_loop(loop)
        with loop:
            saved = loop.run_until_complete(run(args.out, args.lang, args.theme))
    finally:
        wm.terminate()
        wm.wait(5)
    print(f"{len(saved)} screenshots in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
