"""Read every text a person can see in a window: for the untranslated-text and live-language tests.

``visible_texts(top)`` walks the top-level widget and every visible child: window titles, labels, buttons,
check boxes, placeholders, tool tips, combo box items, list/tree/table items and headers, tab titles,
spin box suffixes, and the actions of tool bars and menus. Widgets marked as content
(``weclaw_desktop.ui.translation.mark_content``: messages, tool output, file names) and what the user typed
(line edit and text edit contents) are data, not UI text, and are skipped.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QComboBox,
    QDockWidget,
    QGroupBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QMenu,
    QPlainTextEdit,
    QTableWidget,
    QTabWidget,
    QTextEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)

from weclaw_desktop.ui.translation import CONTENT_PROPERTY

#: Names, not words: they stay as they are in every language.
NAMES = {
    "weclaw", "mcp", "url", "api", "http", "https", "stdio", "sha", "wi-fi", "qr", "token", "json",
    "enter", "shift", "ctrl", "esc", "alt", "tab",
    "github", "openai", "deepseek", "qwen", "dashscope", "zhipu", "glm", "moonshot", "kimi", "siliconflow",
    "openrouter", "ollama", "lm", "studio", "google", "gemini", "python", "npx", "uvx", "pip",
    "gnome", "keyring", "kwallet", "macos", "windows", "linux", "keychain",
    "smtp", "png", "cpu", "powershell", "markdown", "word", "docx", "zip", "pdf", "csv",
    "english",  # the language list names each language in itself
    "user-agent", "mb", "ca", "brave", "tavily", "keepassxc",  # a header name, a unit, a certificate kind, search services
    "bash", "sh", "iana", "duckduckgo",  # program names, the time zone database, a search service
}  # fmt: skip
#: Phrases that are names as a whole (checked before single words).
PHRASES = ("Secret Service", "Credential Manager")

_TAG = re.compile(r"<[^>]+>")
#: Identifiers the UI shows on purpose: a diagnostic code "[bridge-missing]", a quoted setting or
#: credential name “smtp_host” (the catalogue quotes identifiers so).
_IDENTIFIERS = re.compile(r"\[[a-z][a-z-]*\]|“[A-Za-z0-9_.-]+”")
_CHUNK = re.compile(r"[^\s，。、：；！？（）“”‘’「」《》·…]+")
_WORD = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*")
_HAN = re.compile(r"[\u3400-\u9fff]")


def plain(text: str) -> str:
    """Text without HTML tags and entities."""
    return html.unescape(_TAG.sub(" ", text)) if "<" in text or "&" in text else text


def english_words(text: str, names: Iterable[str] = ()) -> list[str]:
    """Words of English in ``text`` that are not names. Identifiers, paths, URLs, numbers and key
    combinations (anything with a digit or one of ``_ . / @ : = + \\``) are not words."""
    allowed = NAMES | {n.lower() for n in names}
    text = plain(text)
    for phrase in PHRASES:
        text = text.replace(phrase, " ")
    text = _IDENTIFIERS.sub(" ", text)
    words = []
    for chunk in _CHUNK.findall(text):
        core = chunk.strip("()[]{}<>,;:!?\"'*•-–—~#%&|")
        if not core or re.search(r"[\d_./@:=+\\]", core):
            continue
        for word in _WORD.findall(core):
            if len(word) > 1 and word.lower() not in allowed:
                words.append(word)
    return words


def has_chinese(text: str) -> bool:
    return bool(_HAN.search(plain(text)))


def _is_content(widget: QWidget) -> bool:
    w: QWidget | None = widget
    while w is not None:
        if w.property(CONTENT_PROPERTY):
            return True
        w = w.parentWidget()
    return False


def _tree_items(tree: QTreeWidget) -> Iterable[QTreeWidgetItem]:
    stack = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    while stack:
        item = stack.pop()
        if item is None or item.isHidden():
            continue
        yield item
        stack += [item.child(i) for i in range(item.childCount())]


def widget_texts(w: QWidget) -> list[tuple[str, str]]:
    """(field, text) pairs of one widget (not its children)."""
    out: list[tuple[str, str]] = []
    if w.isWindow() or isinstance(w, QDockWidget):
        out.append(("title", w.windowTitle()))
    out.append(("tooltip", w.toolTip()))
    if isinstance(w, (QLabel, QAbstractButton)):
        out.append(("text", w.text()))
    elif isinstance(w, (QLineEdit, QPlainTextEdit, QTextEdit)):
        out.append(("placeholder", w.placeholderText()))
    elif isinstance(w, QComboBox):
        out += [(f"item{i}", w.itemText(i)) for i in range(w.count())]
    elif isinstance(w, QAbstractSpinBox):
        out += [("suffix", getattr(w, "suffix", lambda: "")()), ("prefix", getattr(w, "prefix", lambda: "")())]
    elif isinstance(w, QGroupBox):
        out.append(("title", w.title()))
    elif isinstance(w, QTabWidget):
        out += [(f"tab{i}", w.tabText(i)) for i in range(w.count())]
    elif isinstance(w, QListWidget):
        for i in range(w.count()):
            item = w.item(i)
            if not item.isHidden():
                out += [(f"item{i}", item.text()), (f"item{i}.tip", item.toolTip())]
    elif isinstance(w, QTreeWidget):
        header = w.headerItem()
        if not w.isHeaderHidden() and header is not None:
            out += [(f"header{c}", header.text(c)) for c in range(w.columnCount())]
        for n, item in enumerate(_tree_items(w)):
            for c in range(w.columnCount()):
                if not w.isColumnHidden(c):
                    out += [(f"row{n}.{c}", item.text(c)), (f"row{n}.{c}.tip", item.toolTip(c))]
    elif isinstance(w, QTableWidget):
        for c in range(w.columnCount()):
            item = w.horizontalHeaderItem(c)
            if item is not None:
                out.append((f"header{c}", item.text()))
    for n, action in enumerate(w.actions()):
        if not action.isSeparator() and (action.isVisible() or isinstance(w, QMenu)):
            out += [(f"action{n}", action.text()), (f"action{n}.tip", action.toolTip())]
    return [(f, t) for f, t in out if t and t.strip()]


def visible_texts(top: QWidget) -> dict[tuple[int, str], tuple[str, str]]:
    """(id of the widget, field) -> (where, text) for every visible text of ``top`` and its children."""
    found: dict[tuple[int, str], tuple[str, str]] = {}
    for w in [top, *top.findChildren(QWidget)]:
        if isinstance(w, QHeaderView) or (w is not top and not w.isVisibleTo(top)) or _is_content(w):
            continue
        where = f"{type(w).__name__}({w.objectName() or '-'})"
        for field, text in widget_texts(w):
            found[(id(w), field)] = (f"{where}.{field}", text)
    return found


def untranslated(tops: Iterable[QWidget], names: Iterable[str] = ()) -> list[str]:
    """In the Chinese UI: every visible text with English words that are not names."""
    names = list(names)
    problems = []
    for top in tops:
        for where, text in visible_texts(top).values():
            words = english_words(text, names)
            if words:
                problems.append(f"{type(top).__name__}: {where}: {words} in {plain(text)[:120]!r}")
    return problems
