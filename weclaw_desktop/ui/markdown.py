"""Markdown -> the HTML subset QTextDocument renders (markdown-it-py, Pygments for code).

Model output is untrusted: raw HTML in it is escaped, not rendered, and only http(s), mailto and file
links are kept clickable; bare URLs are made links too (linkify). Code blocks are highlighted with inline styles (QTextDocument ignores CSS
classes), tables get real borders and padding through attributes Qt understands. Each code block has a
"Copy" link (``weclaw-copy:`` + the code in base64url, made here, never from the model's text: model links of
that scheme are not kept) that the chat view puts on the clipboard.
"""

from __future__ import annotations

import base64
import binascii
import html
from collections.abc import Sequence
from functools import cache, lru_cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

SAFE_SCHEMES = ("http://", "https://", "mailto:", "file://")
COPY_SCHEME = "weclaw-copy"


def copy_href(code: str) -> str:
    return f"{COPY_SCHEME}:" + base64.urlsafe_b64encode(code.encode("utf-8")).decode("ascii")


def copied_text(href: str) -> str | None:
    """The code a copy link carries (None when ``href`` is not a well-formed copy link)."""
    prefix = f"{COPY_SCHEME}:"
    if not href.startswith(prefix):
        return None
    try:
        return base64.urlsafe_b64decode(href[len(prefix) :].encode("ascii")).decode("utf-8")
    except (ValueError, binascii.Error, UnicodeError):
        return None


def _has_linkify() -> bool:
    try:
        import linkify_it  # noqa: F401 - markdown-it's own companion for bare URLs
    except ImportError:  # pragma: no cover - a dependency; without it bare URLs stay plain text
        return False
    return True


#: Bare URLs ("see https://example.com") become links (linkify-it-py, markdown-it's companion library).
LINKIFY = _has_linkify()


class Palette:
    """The colours the HTML uses; built from the UI theme by the caller."""

    def __init__(self, *, text: str, muted: str, code_bg: str, border: str, link: str, dark: bool) -> None:
        self.text = text
        self.muted = muted
        self.code_bg = code_bg
        self.border = border
        self.link = link
        self.dark = dark


@lru_cache(maxsize=2)
def _formatter(dark: bool) -> Any:
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(noclasses=True, nowrap=True, style="github-dark" if dark else "default")


def _highlight(code: str, lang: str, dark: bool) -> str | None:
    if not lang:
        return None
    try:
        from pygments import highlight
        from pygments.lexers import get_lexer_by_name
        from pygments.util import ClassNotFound
    except ImportError:  # pragma: no cover - Pygments is a dependency of markdown rendering
        return None
    try:
        lexer = get_lexer_by_name(lang, stripall=False)
    except ClassNotFound:
        return None
    try:
        return str(highlight(code, lexer, _formatter(dark)))
    except Exception:
        return None


#: Languages whose highlighter is prepared ahead (:func:`warm_up_highlighting`): the ones answers use most.
COMMON_LANGS = ("python", "bash", "shell", "json", "javascript", "typescript", "html", "css", "sql", "yaml", "c", "cpp")


@cache
def warm_up_highlighting(langs: tuple[str, ...] = COMMON_LANGS) -> None:
    """Compile the common languages' highlighters and both themes' formatters now (in a worker thread at
    start-up): Pygments compiles a lexer's rules the first time it is used — 40-80 ms for one language, which
    was the longest stall of a streamed answer when its first code block arrived on the UI thread. Compiled
    rules are cached per lexer class for the process, and a second call returns at once."""
    for dark in (False, True):
        for lang in langs:
            _highlight("x = 1\n", lang, dark)


class Renderer:
    def __init__(self, palette: Palette) -> None:
        self.palette = palette
        md = MarkdownIt("commonmark", {"html": False, "breaks": True, "linkify": LINKIFY})
        md.enable(["table", "strikethrough", *(["linkify"] if LINKIFY else [])])
        md.validateLink = self._valid_link  # type: ignore[method-assign]
        for name, rule in (
            ("fence", self._fence),
            ("code_block", self._fence),
            ("code_inline", self._code_inline),
            ("table_open", self._table_open),
            ("th_open", self._cell_open),
            ("td_open", self._cell_open),
            ("blockquote_open", self._quote_open),
            ("blockquote_close", self._quote_close),
            ("link_open", self._link_open),
            ("hr", self._hr),
        ):
            # markdown-it binds rules to its renderer; wrap so ours keep ``self`` (this Renderer).
            md.add_render_rule(name, _adapter(rule))
        self.md = md

    @staticmethod
    def _valid_link(url: str) -> bool:
        lowered = url.strip().lower()
        return (
            lowered.startswith(SAFE_SCHEMES) or lowered.startswith("#") or ("://" not in lowered and ":" not in lowered)
        )

    def render(self, text: str) -> str:
        return str(self.md.render(text))

    # --- rules ----------------------------------------------------------------------------------
    def _fence(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        token = tokens[idx]
        code = token.content.rstrip("\n")
        lang = (token.info or "").strip().split(" ")[0]
        p = self.palette
        body = _highlight(code, lang, p.dark) or html.escape(code)
        from weclaw_desktop.i18n import tr

        copy = f'<a href="{copy_href(code)}" style="color:{p.muted}; text-decoration:none;">{tr("actions.copy")}</a>'
        name = f"{html.escape(lang)} &nbsp;·&nbsp; " if lang else ""
        label = f'<div style="color:{p.muted}; font-size:small; margin-bottom:4px;">{name}{copy}</div>'

        return (
            f'<table width="100%" cellspacing="0" cellpadding="10" bgcolor="{p.code_bg}" '
            f'style="margin-top:6px; margin-bottom:8px; border: 1px solid {p.border};"><tr><td>'
            f'{label}<pre style="margin:0; white-space:pre-wrap;">{body}</pre></td></tr></table>\n'
        )

    def _code_inline(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        p = self.palette
        return (
            f'<code style="background-color:{p.code_bg}; font-family: monospace;">'
            f"&nbsp;{html.escape(tokens[idx].content)}&nbsp;</code>"
        )

    def _table_open(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        p = self.palette
        return (
            f'<table cellspacing="0" cellpadding="6" border="1" '
            f'style="border-collapse:collapse; border-style:solid; border-color:{p.border}; '
            'margin-top:6px; margin-bottom:8px;">'
        )  # border-style solid: Qt's default "outset" draws the top and left edges lighter

    def _cell_open(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        token = tokens[idx]
        style = token.attrGet("style") or ""
        align = ""
        if "text-align:" in str(style):
            align = f' align="{str(style).split("text-align:")[1].strip(" ;")}"'
        shade = f' bgcolor="{self.palette.code_bg}"' if token.tag == "th" else ""
        return f"<{token.tag}{align}{shade}>"

    def _quote_open(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        p = self.palette
        return (
            f'<table cellspacing="0" cellpadding="0" style="margin-top:4px; margin-bottom:6px;"><tr>'
            f'<td width="3" bgcolor="{p.border}"></td><td style="padding-left:10px; color:{p.muted};">'
        )

    def _quote_close(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        return "</td></tr></table>\n"

    def _link_open(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        href = tokens[idx].attrGet("href") or ""
        return f'<a href="{html.escape(str(href), quote=True)}" style="color:{self.palette.link};">'

    def _hr(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        return "<hr/>\n"


def _adapter(rule: Any) -> Any:
    def bound(_renderer: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        return str(rule(tokens, idx, options, env))

    return bound


def to_html(text: str, palette: Palette) -> str:
    return Renderer(palette).render(text)
