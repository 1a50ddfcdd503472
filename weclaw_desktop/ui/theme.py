"""Light and dark themes: a Fusion palette, one style sheet, and fonts that cover Chinese.

``apply_theme(app, "system")`` follows the system colour scheme (Qt 6.5+ ``QStyleHints.colorScheme``).
Widgets that paint their own content (chat bubbles, tool cards, Markdown) read :func:`colors` so they
match the active theme; they are refreshed when the theme changes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QToolTip, QWidget

#: Sans-serif families in order of preference; Qt falls back per character, so CJK text finds Noto CJK.
UI_FONTS = [
    "Segoe UI",
    "SF Pro Text",
    "Noto Sans",
    "Microsoft YaHei UI",
    "PingFang SC",
    "Noto Sans CJK SC",
    "Source Han Sans SC",
    "WenQuanYi Micro Hei",
    "sans-serif",
]
MONO_FONTS = ["Cascadia Mono", "SF Mono", "Menlo", "Consolas", "Noto Sans Mono", "DejaVu Sans Mono", "monospace"]


@dataclass(frozen=True)
class Colors:
    dark: bool
    window: str
    base: str
    surface: str  # cards, bubbles
    surface_alt: str  # user bubble, code blocks
    border: str
    text: str
    muted: str
    accent: str
    accent_text: str
    success: str
    warning: str
    danger: str
    info: str
    code_bg: str
    link: str


LIGHT = Colors(
    dark=False,
    window="#f4f5f7",
    base="#ffffff",
    surface="#ffffff",
    surface_alt="#e8f0fe",
    border="#dadde3",
    text="#1f2328",
    muted="#6a7280",
    accent="#2f6feb",
    accent_text="#ffffff",
    success="#1a7f37",
    warning="#b26b00",
    danger="#cf222e",
    info="#2f6feb",
    code_bg="#f3f4f6",
    link="#1f5fd1",
)
DARK = Colors(
    dark=True,
    window="#1b1d21",
    base="#23262b",
    surface="#2a2d33",
    surface_alt="#27374f",
    border="#3a3e46",
    text="#e6e8eb",
    muted="#9aa1ad",
    accent="#4c8dff",
    accent_text="#ffffff",
    success="#3fb950",
    warning="#d29922",
    danger="#f85149",
    info="#58a6ff",
    code_bg="#1e2024",
    link="#79b0ff",
)

_active: Colors = LIGHT
_listeners: list[Callable[[Colors], None]] = []


def colors() -> Colors:
    return _active


def subscribe(callback: Callable[[Colors], None]) -> Callable[[], None]:
    """``callback(colors)`` after every :func:`apply_theme` that changed the colours; returns unsubscribe.

    Widgets that draw with the theme's colours (icons tinted per theme, chat HTML) restyle there."""
    _listeners.append(callback)
    return lambda: _listeners.remove(callback) if callback in _listeners else None


def system_is_dark() -> bool:
    app = QGuiApplication.instance()
    if app is None:
        return False
    hints = QGuiApplication.styleHints()
    scheme = getattr(hints, "colorScheme", None)
    if scheme is None:
        return False
    return bool(scheme() == Qt.ColorScheme.Dark)


def resolve(theme: str) -> Colors:
    if theme == "dark":
        return DARK
    if theme == "light":
        return LIGHT
    return DARK if system_is_dark() else LIGHT


def ui_font(point_size: float | None = None) -> QFont:
    font = QFont()
    font.setFamilies(UI_FONTS)
    font.setPointSizeF(point_size or (10.0 if sys.platform != "darwin" else 13.0))
    font.setHintingPreference(QFont.HintingPreference.PreferVerticalHinting)
    return font


def mono_font(point_size: float | None = None) -> QFont:
    font = QFont()
    font.setFamilies(MONO_FONTS)
    font.setStyleHint(QFont.StyleHint.Monospace)
    font.setPointSizeF(point_size or 9.5)
    return font


def _palette(c: Colors) -> QPalette:
    p = QPalette()
    role = QPalette.ColorRole
    p.setColor(role.Window, QColor(c.window))
    p.setColor(role.WindowText, QColor(c.text))
    p.setColor(role.Base, QColor(c.base))
    p.setColor(role.AlternateBase, QColor(c.window))
    p.setColor(role.ToolTipBase, QColor(c.surface))
    p.setColor(role.ToolTipText, QColor(c.text))
    p.setColor(role.PlaceholderText, QColor(c.muted))
    p.setColor(role.Text, QColor(c.text))
    p.setColor(role.Button, QColor(c.surface))
    p.setColor(role.ButtonText, QColor(c.text))
    p.setColor(role.BrightText, QColor(c.danger))
    p.setColor(role.Highlight, QColor(c.accent))
    p.setColor(role.HighlightedText, QColor(c.accent_text))
    p.setColor(role.Link, QColor(c.link))
    p.setColor(role.Mid, QColor(c.border))
    p.setColor(role.Midlight, QColor(c.border))
    p.setColor(role.Dark, QColor(c.border))
    for r in (role.Text, role.WindowText, role.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, r, QColor(c.muted))
    return p


def _icon_url(name: str) -> str:
    from weclaw_desktop.paths import resource_path

    return resource_path("icons", f"{name}.svg").as_posix()


def style_sheet(c: Colors) -> str:
    return f"""
QMainWindow, QDialog {{ background: {c.window}; }}
QToolTip {{ background: {c.surface}; color: {c.text}; border: 1px solid {c.border}; padding: 6px; }}
QToolBar {{ background: {c.window}; border: none; border-bottom: 1px solid {c.border}; spacing: 4px; padding: 4px 8px; }}
QToolBar QToolButton {{ padding: 4px 8px; border-radius: 6px; }}
QToolBar QToolButton:hover {{ background: {c.border}; }}
QStatusBar {{ background: {c.window}; border-top: 1px solid {c.border}; color: {c.muted}; }}
QStatusBar QLabel {{ color: {c.muted}; padding: 0 6px; }}
QDockWidget {{ titlebar-close-icon: none; }}
QDockWidget::title {{ background: {c.window}; padding: 6px 10px; }}
QLineEdit, QPlainTextEdit, QTextEdit, QSpinBox, QComboBox {{
    background: {c.base}; border: 1px solid {c.border}; border-radius: 6px; padding: 5px 8px;
    selection-background-color: {c.accent}; selection-color: {c.accent_text};
}}
QComboBox::drop-down {{ border: none; width: 24px; subcontrol-origin: padding; subcontrol-position: center right; }}
QComboBox::down-arrow {{ image: url("{_icon_url("chevron_down")}"); width: 12px; height: 12px; }}
QComboBox QAbstractItemView {{ background: {c.base}; border: 1px solid {c.border}; selection-background-color: {c.surface_alt}; selection-color: {c.text}; }}
QSpinBox::up-button, QSpinBox::down-button {{ border: none; width: 18px; }}
QSpinBox::up-arrow {{ image: url("{_icon_url("chevron_up")}"); width: 10px; height: 10px; }}
QSpinBox::down-arrow {{ image: url("{_icon_url("chevron_down")}"); width: 10px; height: 10px; }}
QLineEdit:focus, QPlainTextEdit:focus, QSpinBox:focus, QComboBox:focus {{ border: 1px solid {c.accent}; }}
QPushButton {{
    background: {c.surface}; border: 1px solid {c.border}; border-radius: 6px; padding: 5px 14px; min-height: 20px;
}}
QPushButton:hover {{ border-color: {c.accent}; }}
QPushButton:disabled {{ color: {c.muted}; background: {c.window}; }}
QPushButton[primary="true"] {{ background: {c.accent}; color: {c.accent_text}; border: 1px solid {c.accent}; font-weight: 600; }}
QPushButton[primary="true"]:hover {{ background: {QColor(c.accent).lighter(112).name()}; }}
QPushButton[danger="true"] {{ background: {c.danger}; color: #ffffff; border: 1px solid {c.danger}; font-weight: 600; }}
QPushButton[flat="true"] {{ background: transparent; border: none; color: {c.link}; padding: 2px 6px; }}
QPushButton[flat="true"]:hover {{ text-decoration: underline; }}
QListWidget, QTreeWidget, QTableWidget {{
    background: {c.base}; border: 1px solid {c.border}; border-radius: 8px; outline: none;
}}
QListWidget::item {{ padding: 7px 8px; border-radius: 6px; margin: 1px 4px; }}
QListWidget::item:selected {{ background: {c.surface_alt}; color: {c.text}; }}
QListWidget::item:hover:!selected {{ background: {c.window}; }}
QTreeWidget::item {{ padding: 3px 2px; }}
QCheckBox::indicator, QTreeView::indicator {{
    width: 13px; height: 13px; border: 1px solid {c.muted}; border-radius: 4px; background: {c.base};
}}
QCheckBox::indicator:checked, QTreeView::indicator:checked {{
    background: {c.accent}; border-color: {c.accent}; image: url("{_icon_url("check_on_accent")}");
}}
QCheckBox::indicator:disabled, QTreeView::indicator:disabled {{ border-color: {c.border}; background: {c.window}; }}
QTreeWidget::item:selected {{ background: {c.surface_alt}; color: {c.text}; }}
QHeaderView::section {{ background: {c.window}; color: {c.muted}; border: none; border-bottom: 1px solid {c.border}; padding: 4px 6px; }}
QTabWidget::pane {{ border: none; }}
QTabBar::tab {{ padding: 6px 14px; color: {c.muted}; border: none; border-bottom: 2px solid transparent; }}
QTabBar::tab:selected {{ color: {c.text}; border-bottom: 2px solid {c.accent}; }}
QScrollArea {{ border: none; background: transparent; }}
QProgressBar {{ background: {c.border}; border: none; border-radius: 3px; max-height: 6px; text-align: center; }}
QProgressBar::chunk {{ background: {c.accent}; border-radius: 3px; }}
QFrame#ToolCard {{ background: {c.surface}; border: 1px solid {c.border}; border-radius: 10px; }}
QFrame#Bubble {{ background: {c.surface}; border: 1px solid {c.border}; border-radius: 12px; }}
QFrame#UserBubble {{ background: {c.surface_alt}; border: none; border-radius: 12px; }}
QFrame#Composer {{ background: {c.base}; border: 1px solid {c.border}; border-radius: 12px; }}
QFrame#Composer QPlainTextEdit {{ border: none; background: transparent; padding: 4px; }}
QFrame#SetupPanel {{ background: {c.surface}; border: 1px solid {c.border}; border-radius: 14px; }}
QFrame#Notice {{ background: {"#3a2f17" if c.dark else "#fff5e0"}; border: 1px solid {"#6b5322" if c.dark else "#f1cf86"}; border-radius: 8px; }}
QLabel#Muted {{ color: {c.muted}; }}
QLabel#CardArguments {{ background: {c.code_bg}; border-radius: 6px; padding: 8px; color: {c.text}; }}
QPlainTextEdit#CardFullOutput {{ background: {c.code_bg}; color: {c.text}; }}
QTextBrowser#MarkdownView {{ background: transparent; border: none; padding: 0; }}
QLabel#ChatNotice {{ padding: 4px 12px; }}
QLabel#Title {{ font-size: 15pt; font-weight: 600; }}
QLabel#Section {{ font-weight: 600; color: {c.text}; padding-top: 6px; }}
QListWidget#SettingsNav {{ background: transparent; border: none; }}
QListWidget#SettingsNav::item {{ padding: 8px 12px; }}
QWidget#Sidebar {{ background: {c.window}; }}
QSplitter::handle {{ background: {c.border}; }}
"""


def apply_theme(app: QApplication, theme: str = "system") -> Colors:
    """Apply ``theme`` ("light", "dark", "system") to the whole application; returns its colours."""
    global _active
    before = _active
    _active = resolve(theme)
    if app.style().name().lower() != "fusion":
        app.setStyle("Fusion")
    app.setPalette(_palette(_active))
    QToolTip.setPalette(_palette(_active))
    app.setFont(ui_font())
    app.setStyleSheet(style_sheet(_active))
    if _active is not before:
        for callback in list(_listeners):
            callback(_active)
    return _active


def tint(widget: QWidget, color: str) -> None:
    """Draw ``widget``'s text in ``color``. Through its palette, not a style sheet of its own: a widget with its
    own style sheet is polished again on each change (a tool card has four of them; the chat makes cards while
    scrolling). Works for widgets no rule of :func:`style_sheet` gives a colour (plain QLabels)."""
    palette = widget.palette()
    want = QColor(color)
    if palette.color(QPalette.ColorRole.WindowText) == want and palette.isBrushSet(
        QPalette.ColorGroup.Active, QPalette.ColorRole.WindowText
    ):
        return
    palette.setColor(QPalette.ColorRole.WindowText, want)
    palette.setColor(QPalette.ColorRole.Text, want)
    widget.setPalette(palette)


def status_color(status: str) -> str:
    c = _active
    return {
        "queued": c.muted,
        "awaiting_approval": c.warning,
        "running": c.info,
        "success": c.success,
        "error": c.danger,
        "timeout": c.danger,
        "denied": c.warning,
        "cancelled": c.muted,
    }.get(status, c.muted)
