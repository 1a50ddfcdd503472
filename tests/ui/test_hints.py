"""Every hint that sends the user somewhere ("Settings > Tools > email", "设置 > 工具 > 禁止列表", "toolbar >
Phone") names a place that exists: the test follows each one in the real window and Settings dialog."""

from __future__ import annotations

import ast
import asyncio
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from fakeopenai import FakeOpenAI
from uihelpers import configured_settings

from weclaw_desktop.i18n import Text
from weclaw_desktop.ui.mcp_page import McpPage
from weclaw_desktop.ui.translation import install_translations, set_ui_language

ROOT = Path(__file__).resolve().parents[2]
SETTINGS_WORDS = {"en": "Settings", "zh": "设置"}
TOOLBAR_WORDS = {"en": "toolbar", "zh": "工具栏"}
ARROW = re.compile(r"\s*(?:>|→)\s*")
STOP = {
    "en": re.compile(r"[.,;:()（）。，；：“”\"]|\s(?:and|or|if|to|in|for|then|so|is|are)\s|$"),
    "zh": re.compile(r"[.,;:()（）。，；：“”「」\"\s]|$"),  # Chinese runs the next words on after a space
}


@pytest.fixture
def tools_json() -> Path:
    """The real tools.json: the hints name its tools."""
    return ROOT / "tools.json"


def _strings_in_catalogue(lang: str) -> list[str]:
    data = tomllib.loads((ROOT / "resources" / "i18n" / f"{lang}.toml").read_text(encoding="utf-8"))
    out: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, str):
            out.append(node)

    walk(data)
    return out


def _strings_in_code() -> list[str]:
    out: list[str] = []
    for path in (ROOT / "weclaw_desktop").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                out.append(node.value)
    return out


def _paths(text: str, word: str, lang: str) -> list[list[str]]:
    """Every "word > A > B" in ``text`` as [A, B] (each part cut at punctuation)."""
    found = []
    for match in re.finditer(re.escape(word) + r"(?=\s*(?:>|→))", text):
        rest = text[match.end() :]
        parts: list[str] = []
        while True:
            arrow = ARROW.match(rest)
            if arrow is None:
                break
            rest = rest[arrow.end() :]
            nxt = re.search(r"\s*(?:>|→)", rest)
            stop = STOP[lang].search(rest)
            end = min(nxt.start() if nxt else len(rest), stop.start() if stop else len(rest))
            parts.append(rest[:end].strip())
            rest = rest[end:]
        if parts:
            found.append(parts)
    return found


def _hints(lang: str) -> list[tuple[str, list[str]]]:
    texts = _strings_in_catalogue(lang) + (_strings_in_code() if lang == "en" else [])
    out = []
    for text in texts:
        for kind, word in (("settings", SETTINGS_WORDS[lang]), ("toolbar", TOOLBAR_WORDS[lang])):
            for parts in _paths(text, word, lang):
                out.append((kind, parts, text))
    return [(f"{kind}|{text}", parts) for kind, parts, text in out]


def _match(segment: str, names: dict[str, str]) -> str | None:
    """The key whose name the segment starts with (longest first), or whose name starts with its first word."""
    for key, name in sorted(names.items(), key=lambda kv: -len(kv[1])):
        if segment.lower().startswith(name.lower()):
            return key
    first = segment.split(" ")[0].lower()
    for key, name in names.items():
        if len(first) >= 3 and name.lower().startswith(first):
            return key
    return None


async def test_every_hint_target_exists(make_window: Any, fake_openai: FakeOpenAI) -> None:
    window = await make_window(configured_settings(fake_openai))
    window.add_settings_page(Text("category.mcp"), McpPage(window.secrets))
    from PySide6.QtWidgets import QApplication

    install_translations(QApplication.instance())  # as prepare_ui does: a switch reaches every window
    checked = 0
    for lang in ("en", "zh"):
        set_ui_language(lang)  # as a live switch does: every window retranslates
        await asyncio.sleep(0.05)
        dialog = window.open_settings()
        dialog.retranslate()
        pages = {key: dialog.nav.item(i).text() for i, key in enumerate(dialog.page_keys)}
        tools_page = dialog.tools_page
        tools_page.build()
        sections = {"deny": dialog.tools_page.deny_title.text()}
        for tool, section in tools_page.sections.items():
            if not section.empty:
                sections[tool] = tool
                sections[tool + ".name"] = (
                    section.spec.display.name.zh if lang == "zh" else section.spec.display.name.en
                )
        toolbar = {a.text(): a.text() for a in window.toolbar.actions() if a.text()}
        hints = _hints(lang)
        assert hints, "no hint found: the scanner is broken"
        for where, parts in hints:
            kind, text = where.split("|", 1)
            if kind == "toolbar":
                assert _match(parts[0], toolbar) is not None, (
                    f"{lang}: {text!r} names a toolbar button that does not exist"
                )
                checked += 1
                continue
            page = _match(parts[0], pages)
            assert page is not None, f"{lang}: {text!r} names a Settings page that does not exist ({parts[0]!r})"
            assert dialog.show_target(page) is not None
            if len(parts) > 1:
                targets = [t for t, s in tools_page.sections.items() if not s.empty] if parts[1] == "{tool}" else [None]
                for tool in targets:
                    section = tool or _match(parts[1], sections)
                    assert section is not None, f"{lang}: {text!r}: no section {parts[1]!r} on {page}"
                    shown = dialog.show_target(page, section.removesuffix(".name"))
                    assert shown is not None and shown.isVisibleTo(dialog), f"{lang}: {text!r} -> {section}"
            checked += 1
        dialog.reject()
    set_ui_language("en")
    await asyncio.sleep(0.05)
    assert checked >= 12
