"""Screenshots of a tool card whose call waited for approval (#17 item 5): live, then the same chat reopened from
the history, in both languages and both themes, at 720 px and 1400 px.

    QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1400x900x24" python scripts/card_wait_shots.py OUT

The call is real: the window, the runtime and the approval dialog of the app, the fake OpenAI server of
tests/fakeopenai.py, the GUI tests' tools (``work_run`` works 1.2 s and is set to ask). The dialog is left open
about 2 s before "Allow once". Saves ``card-wait-<live|reopened>-<lang>-<theme>-<width>.png`` and prints each
card's status text (the two must be the same).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("LANG", "C.UTF-8")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "ui")]

from shotkit import run_scene  # noqa: E402  (scripts/ is on sys.path when a script runs)

WAIT_S, WORK_S = 2.0, 1.2


async def scene(out: Path, lang: str, theme_name: str) -> list[Path]:
    from fakeopenai import FakeOpenAI, call, text_reply, tool_reply
    from PySide6.QtWidgets import QApplication
    from uihelpers import TEST_KEY, configured_settings, ui_manifest, until

    from weclaw_desktop import i18n
    from weclaw_desktop.app import create_runtime
    from weclaw_desktop.ui import theme
    from weclaw_desktop.ui.approval_dialog import ApprovalDialog
    from weclaw_desktop.ui.boot import build_window

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    fake = await FakeOpenAI().start()
    tools = Path(os.environ["WECLAW_HOME"]) / "tools.json"
    tools.parent.mkdir(parents=True, exist_ok=True)
    tools.write_text(json.dumps(ui_manifest()), encoding="utf-8")
    settings = configured_settings(fake)
    settings.agent.approvals.tool_rules = {"work_run": "ask"}
    i18n.set_language(lang)
    theme.apply_theme(app, theme_name)
    window = build_window(settings, tools_json=tools)
    create_runtime(window, api_key=TEST_KEY, logs=False)
    await window.controller.idle()
    window.resize(1400, 860)
    window.show()
    question = {"en": "Run the nightly job", "zh": "运行夜间任务"}[lang]
    answer = {"en": "The job is done.", "zh": "任务完成了。"}[lang]
    fake.push(tool_reply(call("work_run", {"seconds": WORK_S}, id="job")), text_reply(answer))
    dialogs: list[ApprovalDialog] = []
    window.gate.listeners.append(dialogs.append)
    await window.controller.send(question)
    await until(lambda: dialogs, what="approval dialog")
    shown = time.perf_counter()
    await until(lambda: dialogs[0].armed, what="armed")
    await asyncio.sleep(max(0.0, WAIT_S - (time.perf_counter() - shown)))
    dialogs[0].once_button.click()
    await until(lambda: not window.composer.busy, limit_s=20, what="the turn")
    await window.controller.idle()
    sid = str(window.controller.session_id)
    shots: list[Path] = []

    async def grab(kind: str) -> None:
        for width in (720, 1400):
            window.resize(width, 860)
            await asyncio.sleep(0.3)  # the loop lays it out (never processEvents() inside a coroutine)
            path = out / f"card-wait-{kind}-{lang}-{theme_name}-{width}.png"
            window.grab().save(str(path))
            shots.append(path)
        print(f"{kind:9} {lang} {theme_name}: {window.chat.card('job').status.text()}")

    await grab("live")
    await window.controller.new_session()
    await window.controller.open_session(sid)
    window.resize(1400, 860)
    await grab("reopened")
    window.quit_app()
    await window.controller.shutdown()
    window.deleteLater()
    await fake.stop()
    return shots


def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    for lang in ("en", "zh"):
        for theme_name in ("light", "dark"):
            for path in run_scene(lambda: scene(out, lang, theme_name), prefix="weclaw-cardwait-"):  # noqa: B023
                print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/cardwait/shots")))
