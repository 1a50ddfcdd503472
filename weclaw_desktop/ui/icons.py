"""Icons: small bundled SVGs (``resources/icons/*.svg``) drawn in the theme's colours.

The SVGs use ``currentColor``; :func:`icon` substitutes a colour and renders them at the sizes Qt asks
for, so one file serves light and dark themes. An unknown name falls back to the generic tool icon,
and a missing resources folder (a broken bundle) falls back to a Qt standard icon rather than failing.
"""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Any

from PySide6.QtCore import QByteArray, QRectF, QSize, Qt
from PySide6.QtGui import QIcon, QImage, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication, QStyle

from weclaw_desktop.paths import resource_path
from weclaw_desktop.ui import theme


@cache
def _svg(name: str) -> str | None:
    path = resource_path("icons", f"{name}.svg")
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


def _render(svg: str, size: int, dpr: float) -> QPixmap:
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    px = max(1, round(size * dpr))
    image = QImage(px, px, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, px, px))
    painter.end()
    pixmap = QPixmap.fromImage(image)
    pixmap.setDevicePixelRatio(dpr)
    return pixmap


def pixmap(name: str, size: int = 18, color: str | None = None) -> QPixmap:
    """The icon ``name`` drawn in ``color`` (default: the theme's text colour). Cached: status icons are
    asked for on every update of a call, and rendering an SVG costs about a millisecond."""
    dpr = 2.0
    app = QApplication.instance()
    if isinstance(app, QApplication) and app.primaryScreen() is not None:
        dpr = max(1.0, app.primaryScreen().devicePixelRatio())
    return _pixmap(name, size, color or theme.colors().text, dpr)


@lru_cache(maxsize=512)
def _pixmap(name: str, size: int, color: str, dpr: float) -> QPixmap:
    svg = _svg(name) or _svg("tool")
    if svg is None:
        style = QApplication.style()
        return style.standardIcon(QStyle.StandardPixmap.SP_FileIcon).pixmap(size, size)
    return _render(svg.replace("currentColor", color), size, dpr)


def icon(name: str, color: str | None = None, sizes: tuple[int, ...] = (18, 24)) -> QIcon:
    """A themed icon; cached per name, colour and theme (the tool panel asks for many)."""
    return _icon(name, color or theme.colors().text, theme.colors().muted, sizes)


@lru_cache(maxsize=512)
def _icon(name: str, color: str, disabled: str, sizes: tuple[int, ...]) -> QIcon:
    result = QIcon()
    for size in sizes:
        result.addPixmap(pixmap(name, size, color))
    result.addPixmap(pixmap(name, sizes[0], disabled), QIcon.Mode.Disabled)
    return result


def app_icon() -> QIcon:
    result = QIcon()
    for size in (16, 32, 64, 128, 256):
        result.addPixmap(pixmap("app", size, "#2f6feb"))
    return result


STATUS_ICONS = {
    "queued": "status_wait",
    "awaiting_approval": "shield",
    "running": "status_run",
    "success": "status_ok",
    "error": "status_error",
    "timeout": "status_error",
    "denied": "status_denied",
    "cancelled": "status_cancel",
}


def status_icon(status: str, size: int = 16) -> QPixmap:
    return pixmap(STATUS_ICONS.get(status, "status_wait"), size, theme.status_color(status))


def icon_size(n: int = 18) -> QSize:
    return QSize(n, n)


# --- icons that follow the theme -------------------------------------------------------------------
#: (target, setter name, icon name, colour role or literal colour, size) of every themed icon shown.
_bound: list[tuple[Any, str, str, str | None, int]] = []
_ROLES = ("text", "muted", "accent", "accent_text", "success", "warning", "danger", "info")


def _color(role: str | None) -> str | None:
    if role is None:
        return None
    return str(getattr(theme.colors(), role)) if role in _ROLES else role


def _apply(target: Any, setter: str, name: str, role: str | None, size: int) -> None:
    if setter == "setPixmap":
        target.setPixmap(pixmap(name, size, _color(role)))
    else:
        getattr(target, setter)(icon(name, _color(role)))


def bind(target: Any, name: str, role: str | None = None, *, size: int = 0) -> None:
    """Show icon ``name`` on ``target`` (a QAction or button: ``setIcon``; a QLabel with ``size``:
    ``setPixmap``) in the theme's colour ``role`` ("text" when None, or a literal "#rrggbb"), and draw it
    again whenever the theme changes. The binding ends when the target is deleted."""
    setter = "setPixmap" if size else "setIcon"
    for i, (t, s, _n, _r, _z) in enumerate(_bound):
        if t is target and s == setter:
            del _bound[i]
            break
    _bound.append((target, setter, name, role, size))
    _apply(target, setter, name, role, size)


def _retint(_colors: object) -> None:
    from shiboken6 import isValid

    alive = [b for b in _bound if isValid(b[0])]
    _bound[:] = alive
    for target, setter, name, role, size in alive:
        _apply(target, setter, name, role, size)


def bound_count() -> int:
    """Themed icons currently bound (tests)."""
    from shiboken6 import isValid

    return sum(1 for b in _bound if isValid(b[0]))


theme.subscribe(_retint)
