"""Screenshots of the message actions (#16 item 3) and the composer's MCP "/" list, in one language per run:

    QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1400x900x24" python scripts/message_actions_shots.py OUT --lang zh

Saves ``<scene>-<lang>-<theme>.png``: an answer with a code block (its Copy link) and the action bars; a user
message edited into a second version ("‹ 2/2 ›"); the composer while editing a sent message; a regenerated
answer with its pager; an error notice with Retry; the delete question; the composer's "/" list of an MCP
server's prompts (our SDK test server over stdio). The model is the fake OpenAI server of tests/fakeopenai.py
on 127.0.0.1; HOME and the user data stay in a temp folder.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("LANG", "C.UTF-8")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "mcp")]

from shotkit import run_scene  # noqa: E402  (scripts/ is on sys.path when a script runs)

TEXTS = {
    "en": {
        "q1": "How do I read a CSV file in Python?",
        "a1": "Use the `csv` module:\n\n```python\nimport csv\n\nwith open('budget.csv', newline='') as f:\n"
        "    for row in csv.DictReader(f):\n        print(row['month'], row['amount'])\n```\n\n"
        "Each row is a dictionary keyed by the header.",
        "q1b": "How do I read a CSV file with pandas?",
        "a1b": "With pandas it is one line:\n\n```python\nimport pandas as pd\ndf = pd.read_csv('budget.csv')\n```",
        "a1c": "`pd.read_csv('budget.csv')` returns a DataFrame; `df.head()` shows the first rows.",
        "q2": "Summarise the budget",
    },
    "zh": {
        "q1": "怎么用 Python 读取 CSV 文件？",
        "a1": "用 `csv` 模块：\n\n```python\nimport csv\n\nwith open('预算.csv', newline='') as f:\n"
        "    for row in csv.DictReader(f):\n        print(row['月份'], row['金额'])\n```\n\n每一行是以表头为键的字典。",
        "q1b": "怎么用 pandas 读取 CSV 文件？",
        "a1b": "用 pandas 只要一行：\n\n```python\nimport pandas as pd\ndf = pd.read_csv('预算.csv')\n```",
        "a1c": "`pd.read_csv('预算.csv')` 返回一个 DataFrame；`df.head()` 显示前几行。",
        "q2": "总结一下预算",
    },
}


async def scene(out: Path, lang: str, theme_name: str) -> list[Path]:
    from fakeopenai import FakeOpenAI, error_reply, text_reply
    from PySide6.QtWidgets import QApplication

    from weclaw_desktop.app import create_runtime
    from weclaw_desktop.secrets import SecretStore
    from weclaw_desktop.settings import Settings
    from weclaw_desktop.ui import theme
    from weclaw_desktop.ui.boot import build_window, prepare_ui
    from weclaw_desktop.ui.message_actions import ActionBar

    t = TEXTS[lang]
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    fake = await FakeOpenAI(model="deepseek-chat").start()
    settings = Settings()
    settings.provider.base_url = fake.base_url
    settings.provider.model = "deepseek-chat"
    settings.provider.preset = "deepseek"
    settings.provider.max_retries = 0
    settings.agent.model_titles = False
    settings.ui.language = lang  # type: ignore[assignment]
    settings.ui.theme = theme_name  # type: ignore[assignment]
    prepare_ui(app, settings)
    theme.apply_theme(app, theme_name)
    secrets = SecretStore()
    secrets.set("api_key", "sk-screenshot-0000")
    window = build_window(settings, secrets=secrets, tools_json=ROOT / "tools.json")
    create_runtime(window, logs=False)
    window.resize(1180, 820)
    window.show()
    controller = window.controller
    await controller.ready()
    shots: list[Path] = []

    async def until(pred: Any, limit: float = 15.0) -> None:
        end = asyncio.get_running_loop().time() + limit
        while not pred():
            if asyncio.get_running_loop().time() > end:
                raise TimeoutError("the scene did not reach its state")
            await asyncio.sleep(0.02)

    async def save(widget: Any, name: str) -> None:
        await asyncio.sleep(0.4)
        path = out / f"{name}-{lang}-{theme_name}.png"
        widget.grab().save(str(path))
        shots.append(path)

    async def turn(start: Any) -> None:
        before = controller.turns_started
        await start
        await until(lambda: controller.turns_started > before and controller.handle is None)
        await controller.idle()

    def bar_of(role: str, index: int = -1) -> ActionBar:
        items = [i for i in window.chat.message_items() if i.role == role]
        found = window.chat.message_widget(items[index]).findChild(ActionBar)
        assert found is not None
        return found

    actions = window.message_actions
    fake.push(text_reply(t["a1"]))
    await turn(controller.send(t["q1"]))
    await save(window, "actions-code")
    # edit the question: a second version
    first = next(i for i in window.chat.message_items() if i.role == "user")
    actions.begin_edit(first)
    window.composer.edit.setPlainText(t["q1b"])
    await save(window, "actions-editing")
    fake.push(text_reply(t["a1b"]))
    before = controller.turns_started
    window.composer._submit()  # as Enter does: the edit goes out as a new version
    await until(lambda: controller.turns_started > before and controller.handle is None)
    await controller.idle()
    await until(lambda: bar_of("user").pager is not None)
    await save(window, "actions-edit-branch")
    # regenerate the answer: two answers to page through
    fake.push(text_reply(t["a1c"]))
    run = next(i for i in window.chat.message_items() if i.role == "user").run_id
    await turn(actions.regenerate_run(run))
    await until(lambda: bar_of("assistant").pager is not None)
    await save(window, "actions-regenerated")
    # an error, with Retry
    fake.push(error_reply(400, "The model is overloaded, try again later."))
    await turn(controller.send(t["q2"]))
    await until(lambda: any("action" in n.data for n in window.chat.notices()))
    await save(window, "actions-retry")
    # the delete question
    bar_of("user").buttons["delete"].click()
    await until(lambda: actions.confirm is not None and actions.confirm.isVisible())
    assert actions.confirm is not None
    await save(actions.confirm, "actions-delete-question")
    actions.confirm.reject()
    window.quit_app()
    await controller.shutdown()
    await fake.stop()
    shots.extend(await slash_list(out, lang, theme_name))
    return shots


async def slash_list(out: Path, lang: str, theme_name: str) -> list[Path]:
    """The composer's "/" list with the prompts of a real MCP server (tests/mcp/sdk_server.py over stdio)."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from weclaw_desktop.mcp import McpManager
    from weclaw_desktop.mcp.connection import ServerState
    from weclaw_desktop.secrets import SecretStore
    from weclaw_desktop.settings import McpServerSettings
    from weclaw_desktop.toolkit.registry import ToolRegistry
    from weclaw_desktop.ui.composer import Composer

    registry = ToolRegistry.from_path()
    manager = McpManager(registry, SecretStore(), log_dir=out / "mcp-logs")
    settings = McpServerSettings(
        name="sdk", transport="stdio", command=sys.executable, args=[str(ROOT / "tests" / "mcp" / "sdk_server.py")]
    )
    tool = manager.start(settings)
    shots: list[Path] = []
    if tool is None or not await tool.connection.wait_for(ServerState.CONNECTED, ServerState.DOWN, within=30):
        print("the SDK MCP server did not connect: no '/' list shot", file=sys.stderr)
        return shots
    composer = Composer()
    composer.resize(760, 150)
    composer.show()
    composer.set_mcp_source(manager)
    composer.edit.setFocus()
    QTest.keyClicks(composer.edit, "/")
    await asyncio.sleep(0.5)
    assert composer.mcp is not None
    popup = composer.mcp.completer.popup()
    if popup is not None and popup.isVisible():
        path = out / f"composer-slash-{lang}-{theme_name}.png"
        from PySide6.QtGui import QGuiApplication

        screen = QGuiApplication.primaryScreen()
        top = composer.mapToGlobal(composer.rect().topLeft())
        bottom = popup.mapToGlobal(popup.rect().bottomRight())
        if screen is not None and os.environ.get("QT_QPA_PLATFORM") == "xcb":  # both windows as the screen shows
            screen.grabWindow(0, top.x(), top.y(), max(760, bottom.x() - top.x()), bottom.y() - top.y() + 8).save(
                str(path)
            )
        else:
            popup.grab().save(str(path))
        shots.append(path)
    QTest.keyClick(composer.edit, Qt.Key.Key_Escape)
    await manager.stop_all()
    composer.deleteLater()
    return shots


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--lang", default="en", choices=["zh", "en"])
    parser.add_argument("--theme", default="light", choices=["light", "dark"])
    args = parser.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)

    shots = run_scene(lambda: scene(out, args.lang, args.theme), prefix="weclaw-actionshots-")
    for path in shots:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
