"""Switching the theme live: every icon is drawn again in the new colours, and nothing on screen keeps the
old palette (chat HTML, cards, notices)."""

from __future__ import annotations

from typing import Any

from fakeopenai import FakeOpenAI, call, text_reply, tool_reply
from PySide6.QtGui import QColor, QIcon, QImage
from PySide6.QtWidgets import QLabel
from uihelpers import configured_settings, until

from weclaw_desktop.settings import Settings
from weclaw_desktop.ui import icons, theme
from weclaw_desktop.ui.chat_view import MessageWidget, ToolCallCard

ANSWER = (
    "Use `ls -la` here:\n\n```python\nprint('x')\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nSee https://example.com."
)


def _ink(image: QImage) -> QColor | None:
    """The colour of the most opaque pixel (the icon's strokes), None when the image is empty."""
    best: tuple[int, QColor] | None = None
    for y in range(image.height()):
        for x in range(image.width()):
            c = image.pixelColor(x, y)
            if c.alpha() > 200 and (best is None or c.alpha() > best[0]):
                best = (c.alpha(), c)
    return best[1] if best else None


def _icon_ink(icon: QIcon) -> QColor | None:
    return _ink(icon.pixmap(18, 18).toImage()) if not icon.isNull() else None


def _palette_words(c: theme.Colors) -> set[str]:
    """Colours only this palette uses in chat HTML."""
    return {c.code_bg.lower(), c.text.lower(), c.link.lower(), c.muted.lower()}


async def test_live_theme_redraws_icons_and_leaves_no_old_palette(make_window: Any, fake_openai: FakeOpenAI) -> None:
    fake_openai.push(tool_reply(call("work_report", {"name": "r.txt", "text": "hi"})), text_reply(ANSWER))
    window = await make_window(configured_settings(fake_openai))
    await window.controller.send("write a report")
    await until(lambda: not window.composer.busy)
    window.show_notice("a file arrived")
    toolbar_icons = [a.icon() for a in window.toolbar.actions() if not a.icon().isNull()]
    assert len(toolbar_icons) >= 3
    light_ink = [_icon_ink(i) for i in toolbar_icons]
    assert all(ink is not None for ink in light_ink)

    def save_dark(s: Settings) -> None:
        s.ui.theme = "dark"

    window.store.update(save_dark)  # what Settings > Appearance > Save does
    assert theme.colors().dark
    await until(lambda: len(window.chat.live_widgets()) == len(window.chat.items), what="chat re-made")

    # every toolbar icon still there, in the dark theme's text colour
    dark_icons = [a.icon() for a in window.toolbar.actions() if not a.icon().isNull()]
    assert len(dark_icons) == len(toolbar_icons)
    for icon in dark_icons:
        ink = _icon_ink(icon)
        assert ink is not None, "an icon vanished"
        assert abs(ink.lightness() - QColor(theme.DARK.text).lightness()) < 40
    assert icons.bound_count() > 5
    brand = [w for w in window.toolbar.findChildren(QLabel) if w.pixmap() is not None and not w.pixmap().isNull()]
    assert brand and all(_ink(w.pixmap().toImage()) is not None for w in brand)

    # the chat: every live widget was made again in the new palette
    old, new = _palette_words(theme.LIGHT), _palette_words(theme.DARK)
    html = ""
    for _item, widget in window.chat.live_widgets():
        if isinstance(widget, MessageWidget):
            html += widget.body.to_html().lower()
            for view in widget.body.views:
                html += view.document().defaultStyleSheet().lower()
        elif isinstance(widget, ToolCallCard):
            html += widget.title.text().lower() + widget.styleSheet().lower()
            html += widget.icon.pixmap().toImage().pixelColor(9, 9).name()
    assert html
    assert not (old - new) & {w for w in old if w in html}, "old palette colour left in the chat"
    assert theme.DARK.code_bg.lower() in html or theme.DARK.link.lower() in html
    # the composer's own buttons (attach, model switcher) were drawn again too
    for button in (window.composer.attach, window.composer.model_switcher):
        ink = _icon_ink(button.icon())
        assert ink is not None, f"{type(button).__name__}'s icon vanished"
        assert abs(ink.lightness() - QColor(theme.DARK.text).lightness()) < 40, type(button).__name__
    # tool panel icons are there after the rebuild
    item = window.tool_panel.item_for("work")
    assert not item.icon(0).isNull() and _icon_ink(item.icon(0)) is not None
    # tooltips follow the theme: the app stylesheet and the tooltip palette are the dark ones
    from PySide6.QtWidgets import QApplication, QToolTip

    app = QApplication.instance()
    assert isinstance(app, QApplication) and theme.DARK.surface in app.styleSheet()
    assert QToolTip.palette().color(QToolTip.palette().ColorRole.ToolTipText).name() == theme.DARK.text

    def save_light(s: Settings) -> None:
        s.ui.theme = "light"

    window.store.update(save_light)
    for icon in [a.icon() for a in window.toolbar.actions() if not a.icon().isNull()]:
        ink = _icon_ink(icon)
        assert ink is not None and abs(ink.lightness() - QColor(theme.LIGHT.text).lightness()) < 40
