"""Scrolling a long chat: widgets are recycled and prepared in idle time, and what the user sees stays true.

What must survive: scrolling a 400-message chat from the end to the top and back, every message widget on
screen shows its own item's text and only the decorations its own item's decorator call put there (a
recycled widget carries nothing over from the message it showed before — no old action bar, no old
highlight); decorators ran once for every widget made or rebound; the screen never stays blank once the
loop is idle; widgets stay few; Markdown is rendered ahead in idle time on the Qt thread (no worker
thread); a streaming answer's widget is never recycled.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from typing import Any

from fakeopenai import FakeOpenAI, hang_reply
from PySide6.QtWidgets import QLabel
from uihelpers import configured_settings, until

from weclaw_desktop.ui.chat_view import MessageItem, MessageWidget


def _chat(n: int) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for i in range(n // 2):
        pairs.append(("user", f"question {i}" + " more" * (i % 9)))  # one line, bubbles of many widths
        pairs.append(
            ("assistant", f"## Answer {i}\n\n- point `{i}`\n- another point\n\n| a | b |\n|---|---|\n| {i} | x |")
        )
    return pairs


def _blank_px(chat: Any) -> int:
    """Pixels of the screen where an item is but no widget shows it."""
    bar = chat.verticalScrollBar()
    top, page = bar.value(), chat.viewport().height()
    missing = 0
    for item in chat.items:
        widget = chat.widget_of(item)
        i = chat.index_of(item)
        start, end = chat._offsets[i], chat._offsets[i + 1]
        if end >= top and start <= top + page and widget is None:
            missing += min(end, top + page) - max(start, top)
    return missing


def _tags(widget: MessageWidget) -> list[str]:
    return [w.text() for w in widget.findChildren(QLabel, "Tag") if not w.isHidden()]


def _check_live(chat: Any, highlighted: set[int]) -> None:
    for item, widget in chat.live_widgets():
        if not isinstance(widget, MessageWidget):
            continue
        assert widget.item is item
        number = item.text.split()[1] if item.role == "user" else item.text.split()[2]
        assert number in widget.plain_text(), "a widget shows another message's text"
        assert _tags(widget) == [f"tag {item.key}"], "decorations of another message left in the widget"
        if item.key not in highlighted:
            assert not any(v.extraSelections() for v in widget.body.views), "an old highlight was carried over"


def _check_heights(chat: Any, decorate: Any) -> None:
    """Every live message is as tall as a widget made fresh for it (a rebound one keeps no old measure)."""
    for item, widget in chat.live_widgets():
        if isinstance(widget, MessageWidget):
            fresh = MessageWidget(item, chat._renderer)
            decorate(fresh)
            want = fresh.heightForWidth(chat.column_width())
            fresh.deleteLater()
            assert abs(widget.height() - want) <= 2, f"{item.role} {item.text[:20]!r}: {widget.height()} != {want}"


def _tagger(calls: list[int]) -> Any:
    def decorate(widget: MessageWidget) -> None:
        calls.append(widget.item.key)
        tag = QLabel(f"tag {widget.item.key}")
        tag.setObjectName("Tag")
        widget.slot("actions").addWidget(tag)

    return decorate


async def test_scrolling_recycles_widgets_and_every_widget_shows_only_its_own_item(
    make_window: Any, fake_openai: FakeOpenAI
) -> None:
    window = await make_window(configured_settings(fake_openai))
    chat = window.chat
    calls: list[int] = []
    unsubscribe = chat.add_message_decorator(_tagger(calls))
    threads_before = {t.name for t in threading.enumerate()}
    made0, calls0 = chat.made, len(calls)
    chat.load_history(_chat(400))
    await until(lambda: chat.live_widgets() and _blank_px(chat) == 0, what="the end shown")
    assert chat.at_end
    highlighted: set[int] = set()
    for item, widget in chat.live_widgets():  # what a find highlight leaves on the widgets
        if isinstance(widget, MessageWidget):
            widget.view.highlight("point" if item.role == "assistant" else "question")
            highlighted.add(item.key)

    bar = chat.verticalScrollBar()
    steps = 0
    while bar.value() > 0:
        bar.setValue(bar.value() - chat.viewport().height() // 2)
        steps += 1
        # the user reads a moment: the idle work prepares what comes next
        await until(lambda: _blank_px(chat) == 0 and not chat._idle.isActive(), what=f"settled after step {steps}")
        _check_live(chat, highlighted)
        assert len(chat.live_widgets()) < 60, "widgets are dropped far from the screen"
    assert steps > 20
    await until(lambda: not chat._idle.isActive(), what="idle work done")
    _check_live(chat, highlighted)
    assert chat.rebound > 0, "dropped message widgets are rebound, not made again"
    assert len(calls) - calls0 == chat.made - made0, "the decorators ran once for every widget made or rebound"
    assert chat.prerendered > 0, "Markdown was rendered ahead of the scroll in idle time"
    assert not {t.name for t in threading.enumerate()} - threads_before, "no pre-render thread"

    chat.scroll_to_end()
    await until(lambda: _blank_px(chat) == 0 and chat.at_end, what="back at the end")
    _check_live(chat, highlighted)
    last = chat.message_items()[-1]
    assert "Answer 199" in chat.message_widget(last).plain_text()
    unsubscribe()


async def test_jumping_around_shows_the_right_widgets(make_window: Any, fake_openai: FakeOpenAI) -> None:
    window = await make_window(configured_settings(fake_openai))
    chat = window.chat
    decorate = _tagger([])
    chat.add_message_decorator(decorate)
    chat.load_history(_chat(300))
    await until(lambda: chat.live_widgets() and _blank_px(chat) == 0)
    bar = chat.verticalScrollBar()
    for value in (bar.maximum() // 2, bar.maximum() // 5, 0, bar.maximum() // 3):
        bar.setValue(value)
        await until(lambda: _blank_px(chat) == 0 and not chat._idle.isActive(), what="settled")
        await asyncio.sleep(0.05)  # the views' own re-measuring after they got their width
        _check_live(chat, set())
        _check_heights(chat, decorate)
    assert chat.rebound > 0


async def test_a_streaming_answer_is_never_recycled(make_window: Any, fake_openai: FakeOpenAI) -> None:
    window = await make_window(configured_settings(fake_openai))
    chat = window.chat
    chat.load_history(_chat(200))
    fake_openai.push(hang_reply("streaming words "))
    await window.controller.send("go on")
    await until(lambda: chat.current is not None and "streaming" in chat.current.text, what="streaming")
    current = chat.current
    assert isinstance(current, MessageItem)
    chat.verticalScrollBar().setValue(0)  # far away: the streaming widget is pinned
    await until(lambda: _blank_px(chat) == 0 and not chat._idle.isActive())
    widget = chat.widget_of(current)
    assert isinstance(widget, MessageWidget) and widget.item is current
    assert all(w.item is not current for pool in chat._pool.values() for w in pool)
    window.controller.stop()
    await until(lambda: not window.composer.busy, what="stopped")


async def test_a_rebound_message_is_measured_for_its_own_text(qtbot: Any) -> None:
    """A widget laid out for a long one-line message, rebound to a short one, is as tall as a fresh one (the
    old width must not be scaled into a taller bubble)."""
    from PySide6.QtWidgets import QWidget

    from weclaw_desktop.ui.chat.markdown_view import markdown_renderer

    renderer = markdown_renderer()
    host = QWidget()
    qtbot.addWidget(host)
    host.resize(700, 400)
    long_item = MessageItem.of("user", "a long question that fills most of the line " * 2)
    short_item = MessageItem.of("user", "hi")
    widget = MessageWidget(long_item, renderer, parent=host)
    widget.setGeometry(0, 0, 680, widget.heightForWidth(680))
    host.show()
    await until(lambda: widget.view.document().textWidth() > 300, what="laid out wide")
    widget.hide()
    widget.unbind()
    widget.bind(short_item, renderer)
    fresh = MessageWidget(short_item, renderer)
    assert widget.heightForWidth(680) == fresh.heightForWidth(680)
    fresh.deleteLater()


async def test_a_widget_that_grows_after_it_was_shown_is_measured_again(
    make_window: Any, fake_openai: FakeOpenAI
) -> None:
    """Only widgets that cannot report their own size changes are re-measured after an anonymous layout
    request; a message that grows later (a feature adds a row to a slot, the thinking block opens) and a bare
    notice whose text grows must still get their new height, and nothing below them may overlap."""
    from weclaw_desktop.ui.chat.notice import NoticeWidget

    window = await make_window(configured_settings(fake_openai))
    window.show()  # Qt posts layout requests only to visible parents, as on a desktop
    chat = window.chat
    window.stack.setCurrentWidget(chat)
    chat.load_history(_chat(6))
    notice = chat.add_notice("short notice")
    chat.add_message("assistant", "the last answer")
    await until(lambda: chat.live_widgets() and _blank_px(chat) == 0 and not chat._idle.isActive(), what="shown")
    first = chat.message_items()[-2]
    widget = chat.message_widget(first)
    before = first.height
    grown = QLabel("\n".join(f"added line {i}" for i in range(8)))
    widget.slot("chips").addWidget(grown)  # as a feature's late result would (no column call)
    await until(lambda: first.height > before + 60, what="the message measured again")
    notice_widget = chat.widget_of(notice)
    assert isinstance(notice_widget, NoticeWidget)
    old = notice.height
    notice_widget.setText("\n".join(f"a much longer notice line {i}" for i in range(6)))
    await until(lambda: notice.height > old + 40, what="the notice measured again")
    await asyncio.sleep(0.05)
    placed = sorted((w.geometry().top(), w.geometry().bottom()) for _, w in chat.live_widgets() if not w.isHidden())
    for (_, bottom), (top, _) in itertools.pairwise(placed):
        assert top > bottom, "widgets overlap: a grown one was not measured again"
