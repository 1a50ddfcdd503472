"""Render the GUI to PNGs: main window mid-conversation (tool cards in several states), the tool panel,
Settings and the approval dialog, in English and Chinese.

    python scripts/screenshots.py OUT_DIR [--theme light|dark] [--lang en,zh]

Runs offscreen by default (set QT_QPA_PLATFORM=xcb under ``xvfb-run`` for a real X11 window). It drives
the real window with a real runtime against a scripted local fake OpenAI server and real tools, so
the pictures show what users see.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("LANG", "C.UTF-8")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "ui")]


def manifest() -> dict[str, object]:
    """The real tools.json (display names, categories, diagnostics) plus a few test tools that run."""
    data = json.loads((ROOT / "tools.json").read_text(encoding="utf-8"))
    tools = data["tools"]
    real = dict(tools)
    tools.clear()
    work = {
        "module": "weclaw_ui_test_tools",
        "class": "WorkTool",
        "actions": ["run", "report"],
        "description": {"en": "Create documents and reports.", "zh": "创建文档和报告。"},
        "display": {"name": {"en": "Documents", "zh": "文档"}, "icon": "document", "category": "files"},
        "timeout_s": 120,
    }
    echo = {
        "module": "sample_tools",
        "class": "EchoTool",
        "actions": ["say", "shout"],
        "description": {"en": "Run a shell command.", "zh": "运行终端命令。"},
        "display": {"name": {"en": "Shell", "zh": "终端命令"}, "icon": "terminal", "category": "system"},
        "config": {"prefix": ""},
        "action_risk": {"shout": "high"},
    }
    paste = {
        "module": "sample_tools",
        "class": "BridgedTool",
        "actions": ["paste"],
        "description": {"en": "Read or set the clipboard text.", "zh": "读取或设置剪贴板文字。"},
        "display": {"name": {"en": "Clipboard", "zh": "剪贴板"}, "icon": "clipboard", "category": "desktop"},
        "bridges": ["clipboard"],
    }
    tools["doc_writer"] = work
    tools["shell"] = echo
    tools["clipboard"] = paste
    for name, spec in real.items():  # the rest as declared (most are not built on this branch yet)
        if name not in tools:
            tools[name] = spec
    data["intents"] = {}
    return data


async def scene(out: Path, lang: str, theme_name: str) -> list[Path]:
    from fakeopenai import FakeOpenAI, call, hang_reply, text_reply, tool_reply
    from PySide6.QtWidgets import QApplication

    from weclaw_desktop.app import build_window, create_runtime
    from weclaw_desktop.settings import Settings
    from weclaw_desktop.ui import theme
    from weclaw_desktop.ui.i18n import set_language

    set_language(lang)
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    theme.apply_theme(app, theme_name)
    zh = lang == "zh"
    fake = await FakeOpenAI(model="deepseek-chat").start()
    tools_json = Path(tempfile.mkdtemp()) / "tools.json"
    tools_json.write_text(json.dumps(manifest(), ensure_ascii=False), encoding="utf-8")
    settings = Settings()
    settings.provider.preset = "deepseek"
    settings.provider.base_url = fake.base_url
    settings.provider.model = "deepseek-chat"
    settings.provider.max_retries = 0
    settings.agent.exposure = "all"
    settings.ui.language = lang  # type: ignore[assignment]
    window = build_window(settings, tools_json=tools_json)
    create_runtime(window, api_key="sk-screenshot", logs=False)
    window.resize(1280, 800)
    window.show()
    shots: list[Path] = []

    async def until(pred: object, limit: float = 10.0) -> None:
        loop = asyncio.get_running_loop()
        end = loop.time() + limit
        while not pred():  # type: ignore[operator]
            if loop.time() > end:
                raise TimeoutError("screenshot scene did not reach its state")
            await asyncio.sleep(0.02)

    async def save(widget: object, name: str) -> None:
        await asyncio.sleep(0.15)  # let layouts and timers settle (never processEvents() inside a coroutine)
        path = out / f"{name}-{lang}-{theme_name}.png"
        widget.grab().save(str(path))  # type: ignore[attr-defined]
        shots.append(path)

    ask = (
        "把本周的销售数据整理成报告，然后发到我手机上"
        if zh
        else "Summarise this week's sales into a report and send it to my phone"
    )
    answer = (
        "报告已生成：**sales-week-48.md**。\n\n| 区域 | 销售额 | 环比 |\n|---|---:|---:|\n| 华东 | ¥128,400 | +12% |\n"
        "| 华南 | ¥96,200 | +4% |\n| 华北 | ¥71,900 | −3% |\n\n要点：\n- 华东增长最快\n- 华北需要关注\n\n"
        "```python\ntotal = sum(r.amount for r in rows)\n```\n"
        if zh
        else "The report is ready: **sales-week-48.md**.\n\n| Region | Sales | Change |\n|---|---:|---:|\n"
        "| East | $128,400 | +12% |\n| South | $96,200 | +4% |\n| North | $71,900 | −3% |\n\nHighlights:\n"
        "- East grew fastest\n- North needs attention\n\n```python\ntotal = sum(r.amount for r in rows)\n```\n"
    )
    fake.push(
        tool_reply(
            call("doc_writer_report", {"name": "sales-week-48.md", "text": "# Sales\n"}),
            call("shell_say", {"text": "wc -l sales.csv", "times": 9}),
            text=("好的，我先生成报告。" if zh else "Sure, let me create the report first.",),
            usage={"prompt_tokens": 812, "completion_tokens": 64, "total_tokens": 876},
        ),
        text_reply(answer, usage={"prompt_tokens": 1430, "completion_tokens": 210, "total_tokens": 1640}),
        tool_reply(
            call("doc_writer_run", {"seconds": 60}),
            call("shell_shout", {"text": "rm -rf ./build"}),
            text=("再整理一下附件。" if zh else "Now tidying up the attachments.",),
        ),
        hang_reply(""),
    )
    await window.controller.send(ask)
    await until(lambda: not window.composer.busy)
    window.set_phone_status("connected", "Pixel 7 · 192.168.1.23")
    window.set_phone_sender(lambda paths: None)
    dialogs: list[object] = []
    window.gate.listeners.append(dialogs.append)
    await window.controller.send("也整理附件" if zh else "Also tidy up the attachments")
    await until(lambda: dialogs and window.board.rows["doc_writer"].active)
    await until(lambda: (window.board.rows["doc_writer"].active[0].fraction or 0) > 0.05)
    window.chat.scroll_to_end()
    await asyncio.sleep(0.3)
    await save(window, "main")
    await save(window.tool_panel, "tool-panel")
    dialog = dialogs[0]
    dialog.resize(520, 420)  # type: ignore[attr-defined]
    await save(dialog, "approval")
    dialog.deny_button.click()  # type: ignore[attr-defined]
    window.controller.stop()
    await until(lambda: not window.composer.busy)
    settings_dialog = window.open_settings()
    settings_dialog.resize(820, 560)
    await save(settings_dialog, "settings")
    settings_dialog.show_page(2)
    await save(settings_dialog, "settings-approvals")
    settings_dialog.reject()
    window.tool_panel.tabs.setCurrentWidget(window.tool_panel.calls)
    await asyncio.sleep(0.3)
    await save(window.tool_panel, "calls")

    first_run = build_window(Settings(), tools_json=tools_json)
    first_run.resize(1100, 700)
    first_run.show()
    await save(first_run, "first-run")
    first_run.quit_app()
    window.quit_app()
    await window.controller.shutdown()
    await fake.stop()
    return shots


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="folder for the PNGs")
    parser.add_argument("--theme", default="light", choices=["light", "dark"])
    parser.add_argument("--lang", default="en,zh", help="comma-separated: en,zh")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    os.environ["WECLAW_HOME"] = tempfile.mkdtemp(prefix="weclaw-shots-")

    from PySide6.QtWidgets import QApplication

    from weclaw_desktop.ui.qtloop import WeclawEventLoop

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)  # type: ignore[union-attr]
    loop = WeclawEventLoop(app)
    asyncio.set_event_loop(loop)
    shots: list[Path] = []
    with loop:
        for lang in args.lang.split(","):
            os.environ["WECLAW_HOME"] = tempfile.mkdtemp(prefix=f"weclaw-shots-{lang}-")
            shots += loop.run_until_complete(scene(args.out, lang.strip(), args.theme))
    for path in shots:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
