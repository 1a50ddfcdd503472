"""Every window and dialog in Chinese, and a live language switch with all of them open.

The scene is real: the main window on the bundled tools.json (every tool, hidden ones with their
diagnostics), a model turn against the fake OpenAI server that leaves a finished tool card and a call
waiting for approval (the approval dialog), notices in the chat, the settings dialog with every page
(the MCP page with a server), the pairing dialog with a running phone link and a paired phone, the
"may this phone pair?" question and the delete-chat confirmation. Qt's own catalogue is installed as the
app does (``prepare_ui``), so Qt's buttons are checked too.

What must hold: in zh no visible text contains an English word that is not a name; switched live to en,
no visible text contains Chinese (apart from the language list's own "简体中文") and every text that was
Chinese changed; back in zh, nothing English again -- without closing or reopening anything.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import shiboken6
from fakeopenai import FakeOpenAI, call, text_reply, tool_reply
from PySide6.QtWidgets import QApplication, QDialog, QMessageBox, QWidget
from textscan import has_chinese, plain, untranslated, visible_texts
from uihelpers import configured_settings, until

from weclaw_desktop.companion import CompanionService
from weclaw_desktop.companion.client import pair_phone
from weclaw_desktop.i18n import Text, language
from weclaw_desktop.paths import app_paths, tools_json_path
from weclaw_desktop.settings import CompanionSettings, McpServerSettings
from weclaw_desktop.toolkit.approval import ApprovalDecision
from weclaw_desktop.ui.approval_dialog import ApprovalDialog
from weclaw_desktop.ui.mcp_page import McpPage
from weclaw_desktop.ui.pairing_dialog import DeviceApprover, PairingDialog
from weclaw_desktop.ui.settings_dialog import SettingsDialog
from weclaw_desktop.ui.translation import install_translations, qt_catalogue, set_ui_language

PHONE = "Pixel"


@pytest.fixture
def tools_json() -> Path:
    return tools_json_path()  # the real tools.json: every tool's names, descriptions and diagnostics


@dataclass
class Scene:
    window: Any
    settings_dialog: SettingsDialog
    pairing: PairingDialog
    approval: ApprovalDialog
    boxes: list[QMessageBox]
    names: list[str]
    service: CompanionService
    tasks: list[asyncio.Future[Any]] = field(default_factory=list)

    def tops(self) -> list[QWidget]:
        return [self.window, self.settings_dialog, self.pairing, self.approval, *self.boxes]

    def texts(self) -> dict[tuple[int, str], tuple[str, str]]:
        """Every visible text of every open window; the settings dialog page by page."""
        out: dict[tuple[int, str], tuple[str, str]] = {}
        # the dialog is a child of the window, so the window's scan sees its current page too: start every scan
        # on the same page, or the counts depend on which page the previous scan ended on
        self.settings_dialog.show_page(0)
        for top in self.tops():
            if top is self.settings_dialog:
                for i in range(top.nav.count()):
                    top.show_page(i)
                    out |= {(k[0], f"page{i}.{k[1]}"): v for k, v in visible_texts(top).items()}
            else:
                out |= visible_texts(top)
        return out

    def untranslated(self) -> list[str]:
        problems = []
        for i in range(self.settings_dialog.nav.count()):
            self.settings_dialog.show_page(i)
            problems += [f"page {i}: {p}" for p in untranslated([self.settings_dialog], self.names)]
        others = [t for t in self.tops() if t is not self.settings_dialog]
        return problems + untranslated(others, self.names)


async def open_everything(make_window: Any, fake: FakeOpenAI, tmp_path: Path) -> Scene:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    set_ui_language("zh")
    install_translations(app)  # as prepare_ui does: Qt's own catalogue follows the language
    settings = configured_settings(fake)
    settings.ui.language = "zh"
    settings.tools.allowed_roots = [str(tmp_path)]
    window = await make_window(settings, language="zh")

    # a turn: a finished calculator call, then a shell command waiting for approval
    fake.push(
        tool_reply(call("calculator_evaluate", {"expression": "6*7"})),
        tool_reply(call("shell_run", {"command": "echo hi"})),
        text_reply("好的"),
    )
    asked: list[ApprovalDialog] = []
    window.gate.listeners.append(asked.append)
    await window.controller.send("算一下 6*7，然后运行 echo hi")
    await until(lambda: asked, 20, "the approval dialog")
    window.show_notice(Text("phone.send.no_device"), "error")

    # the settings dialog with the MCP page (as the app's services add it) and a result on the model page
    mcp = McpPage(window.secrets)
    window.add_settings_page(Text("category.mcp"), mcp)
    settings.mcp_servers = [McpServerSettings(name="github", command="npx", args=["-y", "server-github"])]
    dialog = window.open_settings()
    mcp.load(settings)
    dialog.provider_page._show_result(Text("settings.models_fetched", n=3), True)

    # the phone link: running on loopback, one paired phone, the pairing dialog open
    companion = CompanionService(
        CompanionSettings(enabled=True, auto_accept=True, incoming_dir=str(tmp_path / "in")),
        paths=app_paths(),
        desktop_name="PC",
    )
    await companion.start("127.0.0.1", 0)
    async with aiohttp.ClientSession() as http:  # a phone pairs (the Python phone speaks what the page speaks)
        await pair_phone(http, companion.new_pairing_code().url, PHONE)
    pairing = PairingDialog(companion, window)
    pairing.show()
    await pairing.idle()

    # two questions: may a new phone pair? delete this chat?
    approver = DeviceApprover(window)
    ask = asyncio.ensure_future(approver(_pairing_request()))
    await until(lambda: approver.box is not None, 5, "the pairing question")
    assert approver.box is not None
    confirm = window.sidebar.confirm_delete("x", "2026-12-01")  # a chat's title is data
    await until(lambda: confirm.isVisible(), 5, "the delete confirmation")

    names = [*window.registry.tool_names(include_disabled=True), PHONE, settings.provider.model, "github"]
    for tool in window.registry.tool_names(include_disabled=True):  # identifiers shown next to the names
        names += window.registry.functions_of(tool) + window.registry.spec(tool).actions
    return Scene(window, dialog, pairing, asked[0], [approver.box, confirm], names, companion, [ask])


def _pairing_request() -> Any:
    from weclaw_desktop.companion import PairingRequest

    return PairingRequest(name=PHONE, address="192.168.1.23", user_agent="Mozilla/5.0")


async def close(scene: Scene) -> None:
    for task in scene.tasks:
        task.cancel()
    await asyncio.gather(*scene.tasks, return_exceptions=True)
    if shiboken6.isValid(scene.approval) and scene.approval.decision is None:
        scene.approval.decide(ApprovalDecision.DENY)
    for top in scene.tops()[1:]:
        if shiboken6.isValid(top) and isinstance(top, QDialog) and top.isVisible():
            top.close()
    await scene.service.stop()
    await until(lambda: not scene.window.composer.busy, 20, "the turn to end")


#: Chinese that the English UI shows on purpose: the language list names 简体中文 in itself, and the
#: keyword field's example has a Chinese keyword (keywords are matched in both languages).
CHINESE_IN_ENGLISH = ("简体中文", "代码仓库")


def chinese_part(text: str) -> str:
    text = plain(text)
    for allowed in CHINESE_IN_ENGLISH:
        text = text.replace(allowed, "")
    return text


async def switch(lang: str) -> None:
    set_ui_language(lang)
    for _ in range(3):  # LanguageChange is posted to each window, which passes it to its children
        QApplication.processEvents()
        await asyncio.sleep(0.02)
    assert language() == lang


async def test_every_window_and_dialog_is_chinese_in_zh(
    make_window: Any, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    scene = await open_everything(make_window, fake_openai, tmp_path)
    try:
        assert qt_catalogue() == "qtbase_zh_CN"
        yes_no = [b.text() for b in scene.boxes[1].buttons()]
        assert sorted(yes_no) == ["否(&N)", "是(&Y)"], yes_no  # Qt's own buttons, from qtbase_zh_CN.qm
        texts = scene.texts()
        assert len(texts) > 150, "the scan found too little: is everything open?"
        problems = scene.untranslated()
        assert problems == [], "\n".join(problems)
    finally:
        await close(scene)


async def test_language_switches_live_in_every_open_window(
    make_window: Any, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    scene = await open_everything(make_window, fake_openai, tmp_path)
    try:
        zh = scene.texts()
        chinese = {k for k, (_w, t) in zh.items() if has_chinese(t)}
        assert len(chinese) > 150

        await switch("en")
        en = scene.texts()
        still_chinese = [f"{where}: {plain(t)[:100]!r}" for where, t in en.values() if has_chinese(chinese_part(t))]
        assert still_chinese == [], "\n".join(still_chinese)
        unchanged = [
            zh[k][0] for k in chinese if k in en and en[k][1] == zh[k][1] and has_chinese(chinese_part(zh[k][1]))
        ]
        assert unchanged == []
        assert qt_catalogue() is None
        assert sorted(b.text() for b in scene.boxes[1].buttons()) == ["&No", "&Yes"]
        assert scene.window.tools_action.text() == "Tools" and scene.window.tool_panel.windowTitle() == "Tool panel"

        await switch("zh")
        assert scene.untranslated() == []
        assert scene.window.tools_action.text() == "工具"
        assert sum(1 for _w, t in scene.texts().values() if has_chinese(t)) >= len(chinese) - 5
    finally:
        await close(scene)
