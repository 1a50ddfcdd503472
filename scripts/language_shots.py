"""Screenshots of a live language switch: every window and dialog opened in one language, then the language
switched (Settings > Appearance > Language > Save, as a user does) with all of them still open.

    python scripts/language_shots.py OUT_DIR [--start zh|en] [--theme light|dark]

Saves ``<window>-<lang>-before.png`` and ``<window>-<other>-live.png`` for the main window (a finished tool
card, a call waiting for approval, a notice), the approval dialog, each settings page (the MCP page with a
server), the pairing dialog (phone link on, one phone paired) and the "new phone" question. Offscreen by
default; under ``xvfb-run`` set ``QT_QPA_PLATFORM=xcb`` for real X11 windows. User data, HOME and the phone
link stay in a temp folder / on 127.0.0.1; the model is tests/fakeopenai.py.
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
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from shotkit import run_scene  # noqa: E402  (scripts/ is on sys.path when a script runs)


async def scene(out: Path, start: str, theme_name: str) -> list[Path]:
    import aiohttp
    from fakeopenai import FakeOpenAI, call, text_reply, tool_reply
    from PySide6.QtWidgets import QApplication

    from weclaw_desktop.app import create_runtime
    from weclaw_desktop.companion import CompanionService, PairingRequest
    from weclaw_desktop.companion.client import pair_phone
    from weclaw_desktop.i18n import Text
    from weclaw_desktop.paths import app_paths
    from weclaw_desktop.secrets import SecretStore
    from weclaw_desktop.settings import McpServerSettings, Settings
    from weclaw_desktop.ui import theme
    from weclaw_desktop.ui.boot import build_window, prepare_ui
    from weclaw_desktop.ui.mcp_page import McpPage
    from weclaw_desktop.ui.pairing_dialog import DeviceApprover, PairingDialog

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    other = "en" if start == "zh" else "zh"
    fake = await FakeOpenAI(model="deepseek-chat").start()
    settings = Settings()
    settings.provider.preset = "deepseek"
    settings.provider.base_url = fake.base_url
    settings.provider.model = "deepseek-chat"
    settings.provider.max_retries = 0
    settings.ui.language = start  # type: ignore[assignment]
    settings.ui.theme = theme_name  # type: ignore[assignment]
    settings.tools.allowed_roots = [os.environ["HOME"]]
    settings.mcp_servers = [McpServerSettings(name="github", command="npx", args=["-y", "server-github"])]
    prepare_ui(app, settings)
    theme.apply_theme(app, theme_name)
    secrets = SecretStore()
    secrets.set(settings.provider.api_key_name, "sk-screenshot-0000")
    window = build_window(settings, secrets=secrets, tools_json=ROOT / "tools.json")
    create_runtime(window, logs=False)
    mcp = McpPage(secrets)
    window.add_settings_page(Text("category.mcp"), mcp)
    window.resize(1320, 860)
    window.show()

    async def until(pred: Any, limit: float = 15.0) -> None:
        end = asyncio.get_running_loop().time() + limit
        while not pred():
            if asyncio.get_running_loop().time() > end:
                raise TimeoutError("the scene did not reach its state")
            await asyncio.sleep(0.02)

    fake.push(
        tool_reply(call("calculator_evaluate", {"expression": "6*7"})),
        tool_reply(call("shell_run", {"command": "echo hi"})),
        text_reply("ok"),
    )
    dialogs: list[Any] = []
    window.gate.listeners.append(dialogs.append)
    await window.controller.send(
        "calculate 6*7, then run echo hi in the terminal" if start == "en" else "算一下 6*7，然后在终端运行 echo hi"
    )
    await until(lambda: dialogs)
    window.show_notice(Text("phone.send.no_device"), "error")

    companion = CompanionService(settings.companion, paths=app_paths(), desktop_name="WeClaw PC")
    companion.settings.auto_accept = True
    await companion.start("127.0.0.1", 0)
    async with aiohttp.ClientSession() as http:  # a phone pairs (the Python phone speaks what the page speaks)
        await pair_phone(http, companion.new_pairing_code().url, "Pixel 7")
    pairing = PairingDialog(companion, window)
    pairing.show()
    await pairing.idle()
    approver = DeviceApprover(window)
    ask = asyncio.ensure_future(approver(PairingRequest(name="Pixel 8", user_agent="", address="192.168.1.23")))
    await until(lambda: approver.box is not None)
    settings_dialog = window.open_settings()
    settings_dialog.resize(930, 666)

    shots: list[Path] = []

    async def grab_all(lang: str, when: str) -> None:
        async def save(widget: Any, name: str) -> None:
            await asyncio.sleep(0.25)
            path = out / f"{name}-{lang}-{when}-{theme_name}.png"
            widget.grab().save(str(path))
            shots.append(path)

        await save(window, "main")
        await save(dialogs[0], "approval")
        for i in range(settings_dialog.nav.count()):
            settings_dialog.show_page(i)
            await save(settings_dialog, f"settings{i}")
        await save(pairing, "pairing")
        assert approver.box is not None
        await save(approver.box, "new-phone")

    await grab_all(start, "before")
    # the user switches the language in Settings > Appearance and saves; every open window follows
    appearance = settings_dialog.appearance_page
    settings_dialog.show_page(settings_dialog.pages.index(appearance))
    appearance.language.setCurrentIndex(appearance.language.findData(other))
    assert settings_dialog.save()
    settings_dialog = window.open_settings()  # reopened to shoot its pages in the new language
    settings_dialog.resize(930, 666)
    await grab_all(other, "live")

    ask.cancel()
    await asyncio.gather(ask, return_exceptions=True)
    dialogs[0].deny_button.click()
    await until(lambda: not window.composer.busy)
    pairing.close()
    window.quit_app()
    await window.controller.shutdown()
    await companion.stop()
    await fake.stop()
    return shots


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--start", default="zh", choices=["zh", "en"])
    parser.add_argument("--theme", default="light", choices=["light", "dark"])
    args = parser.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)

    shots = run_scene(lambda: scene(out, args.start, args.theme), prefix="weclaw-langshots-")
    for path in shots:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
