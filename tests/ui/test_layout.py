"""Layouts that fit: every Settings page (MCP included) at the dialog's default size, and the main window at
its narrowest (half of a 1366 px screen) and on a wide screen, with nothing smaller than it needs."""

from __future__ import annotations

import asyncio
from typing import Any

from fakeopenai import FakeOpenAI, call, text_reply, tool_reply
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QHeaderView,
    QLineEdit,
    QSizePolicy,
    QWidget,
)
from uihelpers import configured_settings, until

from weclaw_desktop.i18n import Text
from weclaw_desktop.settings import McpServerSettings
from weclaw_desktop.ui.chat.column import MAX_COLUMN
from weclaw_desktop.ui.mcp_page import McpPage
from weclaw_desktop.ui.settings_dialog import DEFAULT_SIZE
from weclaw_desktop.ui.translation import install_translations, set_ui_language

NO_SHRINK = (QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Minimum, QSizePolicy.Policy.MinimumExpanding)


def crushed(root: QWidget) -> list[str]:
    """Visible widgets smaller than they need: below their minimum size hint, or below their size hint where
    their size policy says they cannot shrink. The parts Qt's own compound widgets lay out themselves (a
    combo box's or spin box's line edit, a line edit's action buttons, scroll bars' containers) are judged by their owner."""
    out = []
    for w in [root, *root.findChildren(QWidget)]:
        if not w.isVisibleTo(root) or w.width() == 0:
            continue
        owner = w.parentWidget()
        if w.objectName().startswith("qt_") or isinstance(owner, (QComboBox, QAbstractSpinBox, QLineEdit)):
            continue
        if isinstance(w, QHeaderView):
            continue  # judged with its view
        if isinstance(w, QAbstractScrollArea):
            # a scrolling view is usable while a line and a half of text shows (Qt's minimum hint for it is
            # the scroll bars' room, not what the content needs)
            line = w.fontMetrics().lineSpacing()
            if w.height() + 1 < int(line * 1.5) + 2 * w.frameWidth() or w.width() < 4 * line:
                out.append(f"{type(w).__name__}: {w.width()}x{w.height()} shows less than a line")
            continue
        hint, least, policy = w.sizeHint(), w.minimumSizeHint(), w.sizePolicy()
        need_w = hint.width() if policy.horizontalPolicy() in NO_SHRINK else least.width()
        need_h = hint.height() if policy.verticalPolicy() in NO_SHRINK else least.height()
        if policy.hasHeightForWidth() or (w.layout() is not None and w.layout().hasHeightForWidth()):
            need_h = min(need_h, w.heightForWidth(w.width())) if w.heightForWidth(w.width()) > 0 else need_h
        short_w = need_w > 0 and w.width() + 1 < need_w
        short_h = need_h > 0 and w.height() + 1 < need_h
        if short_w or short_h:
            name = type(w).__name__ + (f"#{w.objectName()}" if w.objectName() else "")
            text = getattr(w, "text", lambda: "")()
            out.append(f"{name} {text[:30]!r}: {w.width()}x{w.height()} < {need_w}x{need_h}")
    return out


async def test_every_settings_page_fits_the_default_size(make_window: Any, fake_openai: FakeOpenAI) -> None:
    settings = configured_settings(fake_openai)
    settings.mcp_servers = [McpServerSettings(name="github", command="npx", args=["-y", "server-github"])]
    window = await make_window(settings)
    window.add_settings_page(Text("category.mcp"), McpPage(window.secrets))
    install_translations(QApplication.instance())
    problems = []
    for lang in ("en", "zh"):
        set_ui_language(lang)
        await asyncio.sleep(0.05)
        dialog = window.open_settings()
        assert (dialog.width(), dialog.height()) == DEFAULT_SIZE
        for key in dialog.page_keys:
            dialog.show_page(key)
            await asyncio.sleep(0.02)
            page = dialog.stack.currentWidget()
            problems += [f"{lang} {key}: {p}" for p in crushed(page)]
        dialog.reject()
    set_ui_language("en")
    await asyncio.sleep(0.05)
    assert problems == [], "\n".join(problems)


async def _busy_window(make_window: Any, fake: FakeOpenAI) -> Any:
    long = "A line of an answer that is long enough to wrap several times on a narrow window. " * 6
    fake.push(
        tool_reply(call("work_report", {"name": "a-report-with-a-long-name.txt", "text": "hi"})),
        text_reply(f"{long}\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nprint('x' * 80)\n```"),
    )
    window = await make_window(configured_settings(fake))
    await window.controller.send("write a report and explain it at length " * 3)
    await until(lambda: not window.composer.busy)
    return window


async def test_the_narrowest_window_clips_nothing(make_window: Any, fake_openai: FakeOpenAI) -> None:
    """720 px (and the 640 px minimum): the chat keeps its room (the tool panel folds away), every bubble and
    card fits the chat column, nothing is smaller than it needs; wider again, the panel comes back."""
    window = await _busy_window(make_window, fake_openai)
    for width in (720, 640):
        window.resize(width, 700)
        await asyncio.sleep(0.1)
        assert window.width() == width, "the minimum width is larger than this"
        assert not window.tool_panel.isVisible()
        chat = window.chat
        await until(lambda c=chat: len(c.live_widgets()) == len(c.items))
        for _item, w in chat.live_widgets():
            assert w.x() >= 0 and w.x() + w.width() <= chat.viewport().width(), type(w).__name__
            assert not crushed(w), crushed(w)
        assert crushed(window.composer) == []
        assert window.statusBar().width() <= window.width()
    window.resize(1400, 800)
    await asyncio.sleep(0.1)
    assert window.tool_panel.isVisible() and window.sidebar.isVisible()  # unfolded again by itself


async def test_a_wide_window_keeps_lines_readable(make_window: Any, fake_openai: FakeOpenAI) -> None:
    window = await _busy_window(make_window, fake_openai)
    window.resize(2560, 1200)
    await asyncio.sleep(0.1)
    chat = window.chat
    await until(lambda: len(chat.live_widgets()) == len(chat.items))
    assert chat.viewport().width() > MAX_COLUMN + 200
    for _item, w in chat.live_widgets():
        assert w.width() <= MAX_COLUMN
        left = w.x()
        right = chat.viewport().width() - (w.x() + w.width())
        assert abs(left - right) <= 2  # centred
    assert window.composer.width() <= MAX_COLUMN
