"""Screenshots of the conversation features (#16), in one language per run:

    QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1400x900x24" python scripts/conversation_shots.py OUT --lang zh

Saves ``<scene>-<lang>-<theme>.png``: the composer with attachment chips (text, truncated CSV, image thumbnail,
a file that cannot be read), the model switcher open (two saved configurations) with the capability marks, the
assistant picker open, this chat's instructions dialog, a refused image for a text model, the status bar with
estimated tokens and a cost, the tool panel with the assistant's profile, Settings > Model (configurations,
models and prices) and Settings > Assistants, and the exported chat (HTML rendered by headless Chromium when
/usr/bin/chromium exists; the Markdown and JSON files are saved beside it). User data, HOME and the model (the
fake OpenAI server of tests/fakeopenai.py) stay in a temp folder / on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("LANG", "C.UTF-8")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "agent")]

from shotkit import run_scene  # noqa: E402  (scripts/ is on sys.path when a script runs)

TEXTS = {
    "en": {
        "q1": "Compare the two budgets and tell me which month grew most.",
        "a1": "**February** grew most: +20% over January.\n\n| month | amount |\n|---|---|\n| Jan | 100 |\n| Feb | 120 |",
        "q2": "what is in this picture?",
        "writer": ("Writer", "Write clear, short paragraphs for a general audience."),
        "instructions": "Answer in short sentences. The project is in ~/work/site.",
    },
    "zh": {
        "q1": "比较这两份预算，告诉我哪个月增长最多。",
        "a1": "**二月**增长最多：比一月多 20%。\n\n| 月份 | 金额 |\n|---|---|\n| 一月 | 100 |\n| 二月 | 120 |",
        "q2": "这张图片里是什么？",
        "writer": ("写作助手", "用清楚、简短的段落写作，面向普通读者。"),
        "instructions": "用短句回答。项目在 ~/work/site。",
    },
}


async def scene(out: Path, lang: str, theme_name: str) -> list[Path]:
    from fakeopenai import FakeOpenAI, text_reply
    from PySide6.QtCore import QPoint
    from PySide6.QtGui import QColor, QImage
    from PySide6.QtWidgets import QApplication, QMenu
    from weclaw_agent_test_tools import tiny_png

    from weclaw_desktop.agent.export import export_html, export_json, export_markdown
    from weclaw_desktop.app import create_runtime
    from weclaw_desktop.attachments import prepare_all
    from weclaw_desktop.secrets import SecretStore
    from weclaw_desktop.settings import ProviderSettings, Settings
    from weclaw_desktop.settings.conversation import AssistantSettings, GenerationSettings, ModelPrice
    from weclaw_desktop.ui import theme
    from weclaw_desktop.ui.boot import build_window, prepare_ui

    t = TEXTS[lang]
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    fake = await FakeOpenAI(model="deepseek-chat").start()
    local = await FakeOpenAI(model="qwen2.5-vl").start()
    settings = Settings()
    settings.providers.entries = [
        ProviderSettings(
            name="DeepSeek",
            preset="deepseek",
            base_url=fake.base_url,
            model="deepseek-chat",
            models=["deepseek-reasoner"],
            max_retries=0,
        ),
        ProviderSettings(
            name="OpenAI",
            preset="openai",
            base_url=fake.base_url,
            model="gpt-4o",
            models=["gpt-4o-mini", "gpt-4.1"],
            api_key_name="api_key.openai",
            prices={"gpt-4o": ModelPrice(input_per_m=2.5, output_per_m=10.0)},
            max_retries=0,
        ),
        ProviderSettings(
            name="Ollama", preset="ollama", base_url=local.base_url, model="qwen2.5-vl", api_key_name="api_key.ollama"
        ),
    ]
    settings.providers.active = "DeepSeek"
    name, prompt = t["writer"]
    settings.assistants.entries = [
        *settings.assistants.entries,
        AssistantSettings(
            id="writer",
            name=name,
            icon="✍️",
            system_prompt=prompt,
            tools=["file", "doc_writer", "web"],
            generation=GenerationSettings(temperature=0.7, max_tokens=2000),
        ),
    ]
    settings.agent.model_titles = False
    settings.ui.language = lang  # type: ignore[assignment]
    settings.ui.theme = theme_name  # type: ignore[assignment]
    prepare_ui(app, settings)
    theme.apply_theme(app, theme_name)
    secrets = SecretStore()
    secrets.set("api_key", "sk-screenshot-0000")
    window = build_window(settings, secrets=secrets, tools_json=ROOT / "tools.json")
    create_runtime(window, logs=False)
    window.resize(1320, 860)
    window.show()
    runtime = window.runtime
    assert runtime is not None

    async def until(pred: Any, limit: float = 15.0) -> None:
        end = asyncio.get_running_loop().time() + limit
        while not pred():
            if asyncio.get_running_loop().time() > end:
                raise TimeoutError("the scene did not reach its state")
            await asyncio.sleep(0.02)

    shots: list[Path] = []

    async def save(widget: Any, name: str) -> None:
        await asyncio.sleep(0.3)
        path = out / f"{name}-{lang}-{theme_name}.png"
        widget.grab().save(str(path))
        shots.append(path)

    async def save_menu(menu: QMenu, anchor: Any, name: str) -> None:
        menu.popup(anchor.mapToGlobal(QPoint(0, -menu.sizeHint().height())))
        await asyncio.sleep(0.3)
        await save(menu, name)
        menu.hide()

    files = Path(os.environ["HOME"]) / "Documents"
    files.mkdir(parents=True, exist_ok=True)
    budget = files / ("预算-2026.csv" if lang == "zh" else "budget-2026.csv")
    budget.write_text("month,amount\n" + "\n".join(f"2026-{i % 12 + 1:02d},{i * 7}" for i in range(30_000)))
    notes = files / ("会议纪要.md" if lang == "zh" else "meeting-notes.md")
    notes.write_text("# Notes\n- budget review on Friday\n")
    (files / "photos.zip").write_bytes(b"PK\x03\x04" + bytes(range(256)) * 40)

    # a first exchange, with usage from the endpoint and one estimated request
    fake.push(
        text_reply(t["a1"], usage={"prompt_tokens": 18_400, "completion_tokens": 950, "total_tokens": 19_350}),
    )
    atts = prepare_all([budget, notes], store_dir=runtime.attachment_dir())
    await window.controller.ready()
    await window.controller.send(t["q1"], atts)
    await until(lambda: not window.composer.busy and window.controller.handle is None)
    await window.chat_setup.choose_model("OpenAI", "gpt-4o")
    await until(lambda: window.composer.model_switcher.text().endswith("gpt-4o"))

    # the composer with chips of every kind
    window.composer.add_attachments([budget, notes, files / "photos.zip"])
    image = QImage(320, 200, QImage.Format.Format_RGB32)
    image.fill(QColor("#3b82f6"))
    window.composer.add_image(image)
    window.composer.edit.setPlainText(t["q2"])
    await until(lambda: not window.composer.reading)
    await save(window, "composer")
    await save(window.composer, "composer-close")
    await save_menu(window.composer.model_switcher.menu(), window.composer.model_switcher, "model-switcher")
    await save_menu(window.composer.assistant_picker.menu(), window.composer.assistant_picker, "assistant-picker")

    # an image for a text model: refused, the message and files stay in the composer
    await window.chat_setup.choose_model("DeepSeek", "deepseek-chat")
    await until(lambda: window.composer.model_switcher.text().endswith("deepseek-chat"))
    window.composer.clear_attachments()
    shot = runtime.attachment_dir() / "x.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    shot.write_bytes(tiny_png())
    window.composer.add_image(image)
    await until(lambda: not window.composer.reading)
    window.composer._submit()
    await until(lambda: window.composer.edit.toPlainText() == t["q2"] and window.composer.chips_list)
    await save(window, "image-refused")

    # the assistant's tools in the panel, and this chat's instructions
    await window.chat_setup.choose_assistant("writer")
    await until(lambda: window.board.state("shell") == "hidden")
    await save(window.tool_panel, "tool-panel-assistant")
    await window.chat_setup._save_instructions(t["instructions"])
    await window.chat_setup.edit_instructions()
    await until(lambda: window.chat_setup.dialog is not None and window.chat_setup.dialog.isVisible())
    assert window.chat_setup.dialog is not None
    await save(window.chat_setup.dialog, "instructions")
    window.chat_setup.dialog.reject()
    await save(window.statusBar(), "status-usage")

    # settings: configurations, models and prices; assistants
    dialog = window.open_settings_page("models")
    dialog.resize(980, 760)
    await save(dialog, "settings-models")
    window.open_settings_page("assistants")
    dialog.assistants_page.list.setCurrentRow(1)
    await save(dialog, "settings-assistants")
    dialog.reject()

    # the export
    sid = window.controller.session_id
    html = out / f"export-{lang}.html"
    html.write_text(await export_html(runtime.history, sid), encoding="utf-8")
    (out / f"export-{lang}.md").write_text(await export_markdown(runtime.history, sid), encoding="utf-8")
    import json

    (out / f"export-{lang}.json").write_text(
        json.dumps(await export_json(runtime.history, sid), ensure_ascii=False, indent=1), encoding="utf-8"
    )
    window.quit_app()
    await window.controller.shutdown()
    await fake.stop()
    await local.stop()
    return shots


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--lang", default="en", choices=["zh", "en"])
    parser.add_argument("--theme", default="light", choices=["light", "dark"])
    args = parser.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)

    shots = run_scene(lambda: scene(out, args.lang, args.theme), prefix="weclaw-convshots-")
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    html = out / f"export-{args.lang}.html"
    if Path(chromium).exists() and html.exists():  # the exported page as a browser shows it
        png = out / f"export-html-{args.lang}-{args.theme}.png"
        subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                f"--screenshot={png}",
                "--window-size=900,1100",
                html.as_uri(),
            ],
            check=False,
            capture_output=True,
            timeout=60,
        )
        if png.exists():
            shots.append(png)
    for path in shots:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
