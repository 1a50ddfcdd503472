"""Smaller parts: Markdown safety, translations, bridges, single instance, composer keys and drops."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from uihelpers import until

from weclaw_desktop.paths import app_paths
from weclaw_desktop.ui.chat_view import MessageItem, MessageWidget, stable_split
from weclaw_desktop.ui.composer import Composer
from weclaw_desktop.ui.markdown import Palette, Renderer

UI = Path(__file__).resolve().parents[2] / "weclaw_desktop" / "ui"


def _renderer() -> Renderer:
    return Renderer(Palette(text="#000", muted="#666", code_bg="#eee", border="#ccc", link="#00f", dark=False))


def test_markdown_escapes_html_and_drops_unsafe_links() -> None:
    html = _renderer().render("<img src=x onerror=alert(1)> [a](javascript:alert(1)) [b](https://ok.example)")
    assert "<img" not in html and "&lt;img" in html
    assert 'href="javascript' not in html
    assert 'href="https://ok.example"' in html


def test_markdown_renders_tables_code_and_links() -> None:
    html = _renderer().render("| a | b |\n|---|--:|\n| 1 | 2 |\n\n```python\nx = 1\n```\n")
    assert '<table cellspacing="0" cellpadding="6" border="1"' in html
    assert '<td align="right">2</td>' in html
    assert "<pre" in html and "python" in html


def test_stable_split_never_cuts_inside_a_code_fence() -> None:
    assert stable_split("para one\n\npara two") == len("para one\n\n")
    text = "intro\n\n```\ncode\n\nmore code"
    assert stable_split(text) == len("intro\n\n")  # the blank line inside the open fence does not count
    assert stable_split("no blank line yet") == 0


def test_streamed_message_matches_a_full_render(qtbot: Any) -> None:
    """Streaming renders block-wise, and the end of the stream changes nothing visible: same text, same
    paragraph gaps and the same height as the message rendered whole (no jump when the answer ends)."""
    text = "# Title\n\nSome **bold** text.\n\n- a\n- b\n  - nested\n\n```python\nx = 1\n\ny = 2\n```\n\nEnd."
    item = MessageItem.of("assistant", "", status="streaming")
    streamed = MessageWidget(item, _renderer())
    qtbot.addWidget(streamed)
    streamed.resize(600, 400)
    heights = []
    for i in range(0, len(text), 3):
        item.append(text[i : i + 3])
        streamed.render_now()
        heights.append(streamed.heightForWidth(600))
    whole = MessageWidget(MessageItem.of("assistant", text), _renderer())
    qtbot.addWidget(whole)
    lines = [s.strip() for s in streamed.plain_text().split("\n") if s.strip()]
    assert lines == [s.strip() for s in whole.plain_text().split("\n") if s.strip()]
    item.status = "complete"
    before = streamed.heightForWidth(600)
    streamed.finish()
    assert streamed.plain_text() == whole.plain_text()
    assert streamed.heightForWidth(600) == before == whole.heightForWidth(600)
    # while streaming, a finished paragraph keeps its gap: the height before the last block arrived is the
    # whole render's height without that block (up to the unfinished tail's own line)
    assert max(heights) <= whole.heightForWidth(600) + 20


def test_a_long_stream_renders_in_bounded_groups(qtbot: Any) -> None:
    """A 60k-character answer: each render costs one group, finished groups are never rendered again,
    and the text is complete and in order."""
    from weclaw_desktop.ui.chat.markdown_view import GROUP_CHARS

    item = MessageItem.of("assistant", "", status="streaming")
    widget = MessageWidget(item, _renderer())
    qtbot.addWidget(widget)
    paragraphs = [f"paragraph {i} " + "word " * 40 for i in range(300)]
    for p in paragraphs:
        item.append(p + "\n\n")
        widget.render_now()
    views = widget.body.views
    assert len(views) >= len("".join(paragraphs)) // (GROUP_CHARS + 300)
    assert all(len(v.toPlainText()) < GROUP_CHARS + 400 for v in views)
    shown = widget.plain_text()
    assert shown.index("paragraph 0 ") < shown.index("paragraph 150 ") < shown.index("paragraph 299 ")


async def test_qt_bridges_work(qtbot: Any) -> None:
    from weclaw_desktop.bridges.protocols import ClipboardBridge, DesktopBridge, ScreenBridge
    from weclaw_desktop.bridges.qt_clipboard import QtClipboard
    from weclaw_desktop.bridges.qt_desktop import QtDesktop
    from weclaw_desktop.bridges.qt_screen import QtScreen, ScreenCaptureError

    clipboard, screen, desktop = QtClipboard(), QtScreen(), QtDesktop()
    assert isinstance(clipboard, ClipboardBridge) and isinstance(screen, ScreenBridge)
    assert isinstance(desktop, DesktopBridge)
    await clipboard.write_text("剪贴板 test")
    assert await clipboard.read_text() == "剪贴板 test"
    screens = await screen.screens()
    assert len(screens) >= 1 and screens[0]["index"] == 0
    assert sum(1 for s in screens if s["primary"]) == 1
    try:
        png = await screen.screenshot()
    except ScreenCaptureError:
        png = b""
    assert png == b"" or png.startswith(b"\x89PNG")
    try:
        await screen.screenshot(99)
    except ScreenCaptureError as exc:
        assert "There is no screen 99" in str(exc)
    else:
        raise AssertionError("screen 99 must fail with a clear message")
    assert await desktop.open_url("javascript:alert(1)") is False


async def test_second_launch_activates_the_first(qtbot: Any) -> None:
    from weclaw_desktop.ui.single_instance import SingleInstance

    paths = app_paths()
    first = SingleInstance(paths)
    assert first.listen()
    activated: list[bool] = []
    first.activated.connect(lambda: activated.append(True))
    second = SingleInstance(paths)
    assert second.notify_running()  # a local socket connects through the kernel backlog
    await until(lambda: activated, what="activation message")
    first.close()
    third = SingleInstance(paths)
    assert not third.notify_running(timeout_ms=100)  # nobody listens any more


async def test_composer_enter_sends_shift_enter_adds_a_line_and_drops_become_attachments(
    qtbot: Any, tmp_path: Path
) -> None:
    """A dropped file is an attachment (its text read off the UI thread), never a path pasted into the message."""
    from uihelpers import until

    composer = Composer()
    composer.attachment_dir = tmp_path / "store"
    qtbot.addWidget(composer)
    sent: list[tuple[str, list[Any]]] = []
    composer.send_requested.connect(lambda text, atts: sent.append((text, atts)))
    qtbot.keyClicks(composer.edit, "line one")
    qtbot.keyClick(composer.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(composer.edit, "line two")
    assert composer.edit.toPlainText() == "line one\nline two"
    dropped = tmp_path / "报告 final.md"
    dropped.write_text("# 报告\nall good", encoding="utf-8")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(dropped))])
    event = QDropEvent(
        QPointF(5, 5), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier
    )
    composer.edit.dropEvent(event)
    composer.edit.dropEvent(event)  # the same file twice: one chip
    assert len(composer.chips_list) == 1
    qtbot.keyClick(composer.edit, Qt.Key.Key_Return)  # still reading: sent once it is read
    await until(lambda: sent, what="sent after reading")
    [(text, atts)] = sent
    assert text == "line one\nline two" and [a.name for a in atts] == ["报告 final.md"] and "all good" in atts[0].text
    assert composer.edit.toPlainText() == "" and composer.chips_list == []
    composer.set_busy(True)
    qtbot.keyClicks(composer.edit, "queued")
    qtbot.keyClick(composer.edit, Qt.Key.Key_Return)
    assert len(sent) == 1  # Enter does not send while a turn runs
    assert composer.button.text() == "Stop"


def test_bare_urls_become_links_and_unsafe_ones_do_not() -> None:
    """Bare URLs in an answer are clickable (linkify); javascript: and raw HTML stay text."""
    html = _renderer().render("see https://example.com/a?b=1 and www.qq.com, not javascript:alert(1) <b>x</b>")
    assert '<a href="https://example.com/a?b=1"' in html and '<a href="http://www.qq.com"' in html
    assert "javascript:alert(1)" in html and 'href="javascript' not in html
    assert "&lt;b&gt;" in html
