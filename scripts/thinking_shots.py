"""Screenshots of the Thinking block of a reasoning model, in both languages.

    python scripts/thinking_shots.py OUT_DIR [--lang zh|en|both] [--theme light|dark] [--width 1320]

The model is a scripted DeepSeek-rule server (tests/providers/provider_servers.py) that thinks slowly, calls a
tool, thinks again and answers. Saves, per language: ``thinking-live-<lang>.png`` (the open block streaming with
its elapsed time), ``thinking-done-<lang>.png`` (collapsed above the answer, after a tool call),
``thinking-open-<lang>.png`` (a finished block opened again) and ``thinking-reopened-<lang>.png`` (the chat
reopened from history). Offscreen by default; under ``xvfb-run`` set ``QT_QPA_PLATFORM=xcb`` for a real X11
window (then ``import -window root`` is also saved as ``screen-<lang>.png`` when ImageMagick is installed).
User data and HOME stay in a temp folder; no real keyring is touched.
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
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "agent"), str(ROOT / "tests" / "providers")]

THOUGHT = {
    "en": (
        "The user wants to know how big the report folder is. I should not guess: the file tool can list the "
        "folder with sizes. Then I add them up and answer in one sentence. ",
        "The listing has three files, 1.2 MB in total. The biggest is the PDF. Keep the answer short.",
    ),
    "zh": (
        "用户想知道报告文件夹有多大。不能猜，应该用文件工具列出文件夹和每个文件的大小，再加起来，用一句话回答。",
        "列表里有三个文件，一共 1.2 MB，最大的是那个 PDF。回答要简短。",
    ),
}
ANSWER = {
    "en": "The report folder holds **3 files, 1.2 MB** in total; the largest is `report.pdf` (0.9 MB).",
    "zh": "报告文件夹里有 **3 个文件，共 1.2 MB**；最大的是 `report.pdf`（0.9 MB）。",
}
ASK = {"en": "How big is my report folder?", "zh": "我的报告文件夹有多大？"}


async def scene(out: Path, lang: str, theme_name: str, width: int) -> list[Path]:
    from provider_servers import Call, RuleServer, deepseek_rule, turn_reply
    from PySide6.QtWidgets import QApplication

    from weclaw_desktop.app import create_runtime
    from weclaw_desktop.i18n import set_language
    from weclaw_desktop.secrets import SecretStore
    from weclaw_desktop.settings import Settings
    from weclaw_desktop.ui import theme
    from weclaw_desktop.ui.boot import build_window, prepare_ui
    from weclaw_desktop.ui.thinking_block import ThinkingBlock

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    server = await RuleServer(deepseek_rule).start()
    first, second = THOUGHT[lang]
    slow = turn_reply(
        reasoning=tuple(first[i : i + 4] for i in range(0, len(first), 4)),
        calls=(Call("echo_say", {"text": "report/: report.pdf 0.9 MB, data.csv 0.2 MB, notes.md 0.1 MB"}),),
    )
    slow.delay_s = 0.12
    server.push(slow, turn_reply(reasoning=(second,), text=(ANSWER[lang],)))

    settings = Settings()
    settings.provider.preset = "deepseek"
    settings.provider.base_url = server.base_url
    settings.provider.model = "deepseek-flash"
    settings.provider.max_retries = 0
    settings.agent.exposure = "all"
    settings.ui.language = lang  # type: ignore[assignment]
    settings.ui.theme = theme_name  # type: ignore[assignment]
    prepare_ui(app, settings)
    set_language(lang)
    theme.apply_theme(app, theme_name)
    secrets = SecretStore()
    secrets.set(settings.provider.api_key_name, "sk-screenshot-0000")
    tools = Path(os.environ["WECLAW_HOME"]) / "tools.json"
    from agent_support import agent_manifest, write_manifest

    write_manifest(tools, agent_manifest())
    window = build_window(settings, secrets=secrets, tools_json=tools)
    create_runtime(window, logs=False)
    window.resize(width, 860)
    window.show()

    async def until(pred: Any, limit: float = 30.0) -> None:
        end = asyncio.get_running_loop().time() + limit
        while not pred():
            if asyncio.get_running_loop().time() > end:
                raise TimeoutError("the scene did not reach its state")
            await asyncio.sleep(0.02)

    shots: list[Path] = []

    async def save(name: str) -> None:
        await asyncio.sleep(0.3)
        path = out / f"{name}-{lang}-{theme_name}.png"
        window.grab().save(str(path))
        shots.append(path)
        if os.environ.get("QT_QPA_PLATFORM") == "xcb" and shutil.which("import") and name == "thinking-done":
            screen = out / f"screen-{lang}-{theme_name}.png"
            proc = await asyncio.create_subprocess_exec("import", "-window", "root", str(screen))
            await proc.wait()
            shots.append(screen)

    def blocks() -> list[ThinkingBlock]:
        return window.chat.findChildren(ThinkingBlock)

    task = window.controller.spawn(window.controller.send(ASK[lang]))
    await until(lambda: blocks() and len(blocks()[0].text) > len(first) * 0.95)
    await save("thinking-live")
    await task
    await until(lambda: not window.composer.busy)
    await save("thinking-done")
    blocks()[0].toggle.click()
    await save("thinking-open")
    sid = window.controller.session_id
    await window.controller.new_session()
    await window.controller.open_session(sid)
    blocks()[-1].toggle.click()
    await save("thinking-reopened")

    window.quit_app()
    await window.controller.shutdown()
    await server.stop()
    return shots


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--lang", default="both", choices=["zh", "en", "both"])
    parser.add_argument("--theme", default="light", choices=["light", "dark"])
    parser.add_argument("--width", type=int, default=1320)
    args = parser.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)

    import keyring
    from keyring.backends import fail
    from PySide6.QtWidgets import QApplication

    from weclaw_desktop.ui.qtloop import WeclawEventLoop

    keyring.set_keyring(fail.Keyring())  # type: ignore[no-untyped-call]  # never the real keyring
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    shots: list[Path] = []
    for lang in ("en", "zh") if args.lang == "both" else (args.lang,):
        loop = WeclawEventLoop(app)
        asyncio.set_event_loop(loop)
        base = Path(tempfile.mkdtemp(prefix="weclaw-thinkshots-"))
        (base / "home").mkdir()
        (base / "data").mkdir()
        os.environ.update(HOME=str(base / "home"), USERPROFILE=str(base / "home"), WECLAW_HOME=str(base / "data"))
        try:
            with loop:
                shots += loop.run_until_complete(scene(out, lang, args.theme, args.width))
        finally:
            shutil.rmtree(base, ignore_errors=True)
    for path in shots:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
