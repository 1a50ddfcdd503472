"""Render the GUI to PNGs: the main window mid-conversation (tool cards in several states), the tool
panel, the Calls tab, Settings and the approval dialog, in English and Chinese.

    python scripts/screenshots.py OUT_DIR [--theme light|dark] [--lang en,zh]

Runs offscreen by default (set QT_QPA_PLATFORM=xcb under ``xvfb-run`` for a real X11 window). It drives
the real window with the real tools.json, the real tools and the real Qt bridges, against a local fake
OpenAI server (tests/fakeopenai.py) that plays the model's part. Nothing touches the real home folder:
HOME, WECLAW_HOME and the file roots all point into a fresh temp folder, and the phone link runs on
127.0.0.1 only.

The conversation:

1. "check my computer and save a report" -> ``system_info_overview`` and ``file_write`` succeed (a
   produced file with Open / Send to phone), then a Markdown answer.
2. "total the sales CSVs and clean the build folder" -> ``file_search`` with an invalid argument fails,
   the retry succeeds; then ``python_runner_run`` (allowed earlier by the user) is running with its
   elapsed time while ``shell_run`` waits for approval (the approval dialog shot).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("LANG", "C.UTF-8")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

REGIONS = ("east", "south", "north", "west")

SUM_CODE = """\
import csv, pathlib, time

files = sorted(pathlib.Path("Projects/sales").rglob("*.csv"))
total = 0.0
for i, path in enumerate(files, 1):
    with path.open(encoding="utf-8") as fh:
        total += sum(float(row["amount"]) for row in csv.DictReader(fh))
    print(f"{i}/{len(files)} {path.name}", flush=True)
    time.sleep(0.4)
print(f"total: {total:,.2f}")
"""


def make_home(home: Path) -> None:
    """A small, believable home folder: sales CSVs in a folder tree, a build folder, Documents."""
    sales = home / "Projects" / "sales"
    for week in range(40, 49):
        for region in REGIONS:
            folder = sales / f"2026-w{week}"
            folder.mkdir(parents=True, exist_ok=True)
            rows = "".join(f"{week}-{region}-{n},{(week * 37 + n * 13) % 900 + 100}.50\n" for n in range(60))
            (folder / f"{region}.csv").write_text("order,amount\n" + rows, encoding="utf-8")
    build = home / "Projects" / "sales-dashboard" / "build"
    build.mkdir(parents=True)
    (build / "bundle.js").write_text("console.log('old build')\n", encoding="utf-8")
    (home / "Documents").mkdir()


def report_text(zh: bool) -> str:
    """The report the "model" writes, from this machine's real figures."""
    import platform

    import psutil

    mem = psutil.virtual_memory()
    disk = psutil.disk_usage(str(Path.home()))
    cpu = psutil.cpu_percent(interval=0.2)
    gib = 1024**3
    if zh:
        lines = [
            f"系统：{platform.system()} {platform.release()}",
            f"CPU：{psutil.cpu_count()} 核，当前占用 {cpu:.0f}%",
            f"内存：已用 {mem.used / gib:.1f} / {mem.total / gib:.1f} GB（{mem.percent:.0f}%）",
            f"磁盘：剩余 {disk.free / gib:.0f} GB（共 {disk.total / gib:.0f} GB）",
        ]
        return "# 电脑状态报告\n\n" + "\n".join(f"- {x}" for x in lines) + "\n\n结论：运行正常。\n"
    lines = [
        f"System: {platform.system()} {platform.release()}",
        f"CPU: {psutil.cpu_count()} cores, {cpu:.0f}% busy",
        f"Memory: {mem.used / gib:.1f} of {mem.total / gib:.1f} GB used ({mem.percent:.0f}%)",
        f"Disk: {disk.free / gib:.0f} GB free of {disk.total / gib:.0f} GB",
    ]
    return "# System report\n\n" + "\n".join(f"- {x}" for x in lines) + "\n\nAll good.\n"


async def scene(out: Path, lang: str, theme_name: str) -> list[Path]:
    import aiohttp
    from fakeopenai import FakeOpenAI, call, hang_reply, text_reply, tool_reply
    from PySide6.QtWidgets import QApplication

    from weclaw_desktop.app import create_runtime
    from weclaw_desktop.companion import CompanionService, attach_to_registry
    from weclaw_desktop.companion.client import pair_phone
    from weclaw_desktop.i18n import set_language
    from weclaw_desktop.paths import app_paths
    from weclaw_desktop.secrets import SecretStore
    from weclaw_desktop.settings import Settings
    from weclaw_desktop.ui import theme
    from weclaw_desktop.ui.boot import build_window

    set_language(lang)
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    theme.apply_theme(app, theme_name)
    zh = lang == "zh"
    home = Path(os.environ["HOME"])
    fake = await FakeOpenAI(model="deepseek-chat").start()

    settings = Settings()
    settings.provider.preset = "deepseek"
    settings.provider.base_url = fake.base_url
    settings.provider.model = "deepseek-chat"
    settings.provider.max_retries = 0
    settings.tools.allowed_roots = [str(home)]
    settings.tools.outputs_dir = str(home / "Documents" / "WeClaw")
    settings.agent.approvals.remembered = ["python_runner_run"]  # "always allow" chosen earlier
    settings.ui.language = lang  # type: ignore[assignment]
    secrets = SecretStore()
    secrets.set(settings.provider.api_key_name, "sk-screenshot-0000")  # session-only: the keyring is off
    window = build_window(settings, secrets=secrets, tools_json=ROOT / "tools.json")
    create_runtime(window, logs=False)

    # the phone link, for real, on loopback only: remote_file_share becomes available, a phone is paired
    companion = CompanionService(settings.companion, paths=app_paths(), desktop_name="WeClaw PC")
    await companion.start("127.0.0.1", 0)
    detach = attach_to_registry(companion, window.registry.inject)

    async def accept(request: Any) -> bool:  # the user accepts the phone in the pairing dialog
        return True

    companion.accept_device = accept
    async with aiohttp.ClientSession() as http:  # a phone pairs (the Python phone speaks what the page speaks)
        phone = await pair_phone(http, companion.new_pairing_code().url, "Pixel 7")
    stream = companion.open_stream(phone.device_id)  # what the phone page's event stream does: the phone is online
    window.set_phone_status("connected", "Pixel 7")
    sends: list[Any] = []
    window.set_phone_sender(
        lambda paths: sends.append(asyncio.ensure_future(companion.send_files(paths, device_id=phone.device_id)))
    )

    window.resize(1320, 860)
    window.show()
    shots: list[Path] = []

    async def until(pred: Any, limit: float = 15.0) -> None:
        loop = asyncio.get_running_loop()
        end = loop.time() + limit
        while not pred():
            if loop.time() > end:
                raise TimeoutError("screenshot scene did not reach its state")
            await asyncio.sleep(0.02)

    async def save(widget: Any, name: str) -> None:
        await asyncio.sleep(0.2)  # let layouts and timers settle (never processEvents() inside a coroutine)
        path = out / f"{name}-{lang}-{theme_name}.png"
        widget.grab().save(str(path))
        shots.append(path)

    # --- turn 1: system overview + a report file -----------------------------------------------------
    report_path = "~/Documents/系统报告.md" if zh else "~/Documents/system-report.md"
    answer = (
        "报告已保存到 **文档/系统报告.md**。\n\n| 项目 | 状态 |\n|---|---|\n| CPU | 负载低 |\n| 内存 | 充足 |\n"
        "| 磁盘 | 空间充足 |\n\n需要的话我可以把它发到你的手机上。"
        if zh
        else "Saved the report to **Documents/system-report.md**.\n\n| Item | Status |\n|---|---|\n"
        "| CPU | light load |\n| Memory | plenty free |\n| Disk | plenty free |\n\n"
        "I can send it to your phone if you like."
    )
    fake.push(
        tool_reply(
            call("system_info_overview", {}),
            text=("我先看一下系统状态。" if zh else "Let me check the system first.",),
            usage={"prompt_tokens": 1812, "completion_tokens": 41, "total_tokens": 1853},
        ),
        tool_reply(call("file_write", {"path": report_path, "content": report_text(zh)})),
        text_reply(answer, usage={"prompt_tokens": 2430, "completion_tokens": 96, "total_tokens": 2526}),
    )
    await window.controller.send(
        "看看我电脑现在的状态，写一份简短的报告存到文档文件夹"
        if zh
        else "Check how my computer is doing and save a short report in my Documents folder"
    )
    await until(lambda: not window.composer.busy)

    # --- turn 2: a failed call, its retry, a running script and a command waiting for approval ---------
    dialogs: list[Any] = []
    window.gate.listeners.append(dialogs.append)
    fake.push(
        tool_reply(
            call("file_search", {"path": "~/Projects/sales", "name": "*.csv", "max_results": 0}),
            text=("先找一下销售数据。" if zh else "First, the sales files.",),
        ),
        tool_reply(call("file_search", {"path": "~/Projects/sales", "name": "*.csv", "max_results": 100})),
        tool_reply(
            call("python_runner_run", {"code": SUM_CODE, "cwd": "~", "timeout_s": 120}),
            call("shell_run", {"command": "rm -rf ~/Projects/sales-dashboard/build", "timeout_s": 30}),
            text=(
                "找到 36 个文件，开始汇总，同时清理旧的构建目录。"
                if zh
                else "Found 36 files. Totalling them, and clearing the old build.",
            ),
        ),
        hang_reply(""),
    )
    await window.controller.send(
        "把 Projects/sales 里所有销售 CSV 的金额加起来，顺便删掉 sales-dashboard 的旧 build 目录"
        if zh
        else "Add up the amounts in all the sales CSVs under Projects/sales, and delete the old sales-dashboard build"
    )
    await until(lambda: dialogs and window.board.rows["python_runner"].active)
    running = window.board.rows["python_runner"].active[0]
    await until(lambda: (running.elapsed_s() or 0) > 3.2 and running.message)
    window.chat.scroll_to_end()
    await asyncio.sleep(0.3)
    await save(window, "main")
    await save(window.tool_panel, "tool-panel")
    window.tool_panel.tree.scrollToBottom()  # the hidden tool (e-mail: not set up) is at the end
    await save(window.tool_panel, "tool-panel-end")
    window.tool_panel.tree.scrollToTop()
    script_card = next(c for c in window.chat.cards.values() if c.call.tool == "python_runner")
    script_card.toggle.setChecked(True)  # the folded arguments, unfolded: code shown as code
    await asyncio.sleep(0.1)
    window.chat.scroll_to_end()
    await save(window, "main-arguments")
    script_card.toggle.setChecked(False)
    dialog = dialogs[0]
    await save(dialog, "approval")
    dialog.deny_button.click()
    await until(lambda: window.board.rows["shell"].last.status == "denied")  # type: ignore[union-attr]
    window.controller.stop()  # the running script is cancelled
    await until(lambda: not window.composer.busy)
    window.chat.verticalScrollBar().setValue(0)
    await save(window, "main-report")

    settings_dialog = window.open_settings()
    settings_dialog.resize(820, 580)
    await save(settings_dialog, "settings")
    settings_dialog.show_page(2)
    await save(settings_dialog, "settings-approvals")
    settings_dialog.show_page(3)
    await save(settings_dialog, "settings-files")
    settings_dialog.reject()
    window.tool_panel.tabs.setCurrentWidget(window.tool_panel.calls)
    await asyncio.sleep(0.3)
    await save(window.tool_panel, "calls")

    first_run = build_window(Settings(), tools_json=ROOT / "tools.json")
    first_run.resize(1100, 700)
    first_run.show()
    await save(first_run, "first-run")
    first_run.quit_app()

    companion.close_stream(phone.device_id, stream)
    detach()
    await asyncio.gather(*sends, return_exceptions=True)
    window.quit_app()
    await window.controller.shutdown()
    await companion.stop()
    await fake.stop()
    return shots


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="folder for the PNGs")
    parser.add_argument("--theme", default="light", choices=["light", "dark"])
    parser.add_argument("--lang", default="en,zh", help="comma-separated: en,zh")
    args = parser.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)

    import keyring
    from keyring.backends import fail
    from PySide6.QtWidgets import QApplication

    from weclaw_desktop.ui.qtloop import WeclawEventLoop

    keyring.set_keyring(fail.Keyring())  # type: ignore[no-untyped-call]  # never read or write the real keyring

    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    loop = WeclawEventLoop(app)
    asyncio.set_event_loop(loop)
    shots: list[Path] = []
    with loop:
        for lang in (part.strip() for part in args.lang.split(",")):
            base = Path(tempfile.mkdtemp(prefix=f"weclaw-shots-{lang}-"))
            home = base / "home"
            make_home(home)
            os.environ["HOME"] = str(home)  # "~" in tool calls means this folder, never the real home
            os.environ["USERPROFILE"] = str(home)
            os.environ["WECLAW_HOME"] = str(base / "data")
            try:
                shots += loop.run_until_complete(scene(out, lang, args.theme))
            finally:
                shutil.rmtree(base, ignore_errors=True)
    for path in shots:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
