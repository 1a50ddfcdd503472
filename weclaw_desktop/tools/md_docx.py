"""Markdown -> Word (.docx) with markdown-it-py (parsing) and python-docx (writing).

Supported: headings, paragraphs, bold / italic / strikethrough / inline code / links, bullet and numbered
lists (nested; each numbered list restarts at its own start number), block quotes, fenced and indented code
blocks, simple tables (GFM pipe tables) and horizontal rules. Raw HTML is kept as plain text.

Imports python-docx at module level: import this module only when the optional dependency is present.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from docx import Document
from docx.enum.text import WD_BREAK
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.shared import Pt, RGBColor
from markdown_it import MarkdownIt
from markdown_it.token import Token

CODE_FONT = "Consolas"


@dataclass
class _ListLevel:
    ordered: bool
    num_id: int | None = None  # numbering instance of an ordered list (so each list restarts)


def parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table").enable("strikethrough")


def render_docx(markdown: str, *, title: str | None = None, east_asia_font: str = "") -> Any:
    """A python-docx Document for ``markdown``; ``title`` becomes the document title (and a Title line
    when the text does not start with a level-1 heading)."""
    doc = Document()
    if east_asia_font:
        _set_east_asia_font(doc, east_asia_font)
    tokens = parser().parse(markdown)
    if title:
        doc.core_properties.title = title
        first = next((t for t in tokens if t.type == "heading_open"), None)
        if first is None or first.tag != "h1" or tokens.index(first) != 0:
            doc.add_paragraph(title, style="Title")
    _Renderer(doc).render(tokens)
    return doc


class _Renderer:
    def __init__(self, doc: Any) -> None:
        self.doc = doc
        self.lists: list[_ListLevel] = []
        self.quote = 0
        self.paragraph: Any = None
        self.row: list[Any] = []
        self.rows: list[tuple[bool, list[list[Token]]]] = []
        self.in_head = False

    # --- blocks --------------------------------------------------------------------------------------
    def render(self, tokens: Sequence[Token]) -> None:
        i = 0
        while i < len(tokens):
            tok = tokens[i]
            kind = tok.type
            if kind == "heading_open":
                level = int(tok.tag[1:])
                par = self.doc.add_heading("", level=min(level, 9))
                self._inline(par, tokens[i + 1])
                i += 3
                continue
            if kind == "paragraph_open":
                par = self._new_paragraph()
                self._inline(par, tokens[i + 1])
                i += 3
                continue
            if kind in ("bullet_list_open", "ordered_list_open"):
                ordered = kind == "ordered_list_open"
                start = int(tok.attrGet("start") or 1) if ordered else 1
                self.lists.append(_ListLevel(ordered, self._new_numbering(start) if ordered else None))
            elif kind in ("bullet_list_close", "ordered_list_close"):
                self.lists.pop()
            elif kind == "blockquote_open":
                self.quote += 1
            elif kind == "blockquote_close":
                self.quote -= 1
            elif kind in ("fence", "code_block"):
                self._code(tok.content)
            elif kind == "hr":
                self._rule()
            elif kind == "html_block":
                self.doc.add_paragraph(tok.content.strip())
            elif kind == "table_open":
                self.rows = []
            elif kind == "tr_open":
                self.row = []
            elif kind in ("th_open", "td_open"):
                self.row.append(tokens[i + 1].children or [])
            elif kind == "thead_open":
                self.in_head = True
            elif kind == "thead_close":
                self.in_head = False
            elif kind == "tr_close":
                self.rows.append((self.in_head, list(self.row)))
            elif kind == "table_close":
                self._table()
            i += 1

    def _new_paragraph(self) -> Any:
        if self.lists:
            level = self.lists[-1]
            depth = min(len(self.lists), 3)
            base = "List Number" if level.ordered else "List Bullet"
            style = base if depth == 1 else f"{base} {depth}"
            par = self.doc.add_paragraph(style=style)
            if level.ordered and level.num_id is not None:
                _set_num(par, level.num_id, depth - 1)
            return par
        if self.quote:
            return self.doc.add_paragraph(style="Quote")
        return self.doc.add_paragraph()

    def _code(self, content: str) -> None:
        par = self.doc.add_paragraph(style="No Spacing")
        lines = content.rstrip("\n").split("\n")
        for n, line in enumerate(lines):
            run = par.add_run(line)
            _code_font(run)
            if n < len(lines) - 1:
                run.add_break(WD_BREAK.LINE)
        _shade(par, "F2F2F2")
        self.doc.add_paragraph(style="No Spacing")

    def _rule(self) -> None:
        par = self.doc.add_paragraph()
        p_pr = par._p.get_or_add_pPr()
        borders = OxmlElement("w:pBdr")
        bottom = OxmlElement("w:bottom")
        for key, value in (("w:val", "single"), ("w:sz", "6"), ("w:space", "1"), ("w:color", "999999")):
            bottom.set(qn(key), value)
        borders.append(bottom)
        p_pr.append(borders)

    def _table(self) -> None:
        if not self.rows:
            return
        cols = max(len(cells) for _, cells in self.rows)
        table = self.doc.add_table(rows=len(self.rows), cols=cols)
        table.style = "Table Grid"
        for r, (header, cells) in enumerate(self.rows):
            for c, children in enumerate(cells):
                par = table.cell(r, c).paragraphs[0]
                self._runs(par, children, bold=header)
        self.doc.add_paragraph()

    # --- numbering -------------------------------------------------------------------------------------
    def _new_numbering(self, start: int) -> int | None:
        """A numbering instance for one ordered list, based on the List Number style, restarted at ``start``."""
        try:
            style = self.doc.styles["List Number"]
            num_pr = style.element.pPr.numPr
            base_num_id = num_pr.numId.val
            numbering = self.doc.part.numbering_part.element
        except (KeyError, AttributeError):
            return None
        base = next((n for n in numbering.findall(qn("w:num")) if n.get(qn("w:numId")) == str(base_num_id)), None)
        if base is None:
            return None
        abstract_id = base.find(qn("w:abstractNumId")).get(qn("w:val"))
        ids = [int(n.get(qn("w:numId"))) for n in numbering.findall(qn("w:num"))]
        new_id = max(ids) + 1
        num = OxmlElement("w:num")
        num.set(qn("w:numId"), str(new_id))
        abstract = OxmlElement("w:abstractNumId")
        abstract.set(qn("w:val"), abstract_id)
        num.append(abstract)
        for ilvl in range(3):
            override = OxmlElement("w:lvlOverride")
            override.set(qn("w:ilvl"), str(ilvl))
            start_el = OxmlElement("w:startOverride")
            start_el.set(qn("w:val"), str(start if ilvl == 0 else 1))
            override.append(start_el)
            num.append(override)
        numbering.append(num)
        return new_id

    # --- inline --------------------------------------------------------------------------------------
    def _inline(self, par: Any, token: Token) -> None:
        self._runs(par, token.children or [])

    def _runs(self, par: Any, children: Sequence[Token], *, bold: bool = False) -> None:
        state = {"bold": bold, "italic": False, "strike": False}
        href: str | None = None
        for tok in children:
            kind = tok.type
            if kind in ("text", "html_inline"):
                if not tok.content:
                    continue
                self._run(par, tok.content, state, link=href is not None)
            elif kind == "code_inline":
                run = par.add_run(tok.content)
                _code_font(run)
            elif kind == "softbreak":
                par.add_run(" ")
            elif kind == "hardbreak":
                par.add_run().add_break(WD_BREAK.LINE)
            elif kind == "strong_open":
                state["bold"] = True
            elif kind == "strong_close":
                state["bold"] = bold
            elif kind == "em_open":
                state["italic"] = True
            elif kind == "em_close":
                state["italic"] = False
            elif kind == "s_open":
                state["strike"] = True
            elif kind == "s_close":
                state["strike"] = False
            elif kind == "link_open":
                href = str(tok.attrGet("href") or "")
            elif kind == "link_close":
                if href and not href.startswith("#"):
                    par.add_run(f" ({href})")
                href = None
            elif kind == "image":
                alt = "".join(c.content for c in tok.children or []) or "image"
                par.add_run(f"[{alt}]").italic = True

    @staticmethod
    def _run(par: Any, text: str, state: dict[str, bool], *, link: bool) -> None:
        run = par.add_run(text)
        run.bold = state["bold"] or None
        run.italic = state["italic"] or None
        if state["strike"]:
            run.font.strike = True
        if link:
            run.underline = True
            run.font.color.rgb = RGBColor(0x05, 0x63, 0xC1)


def _code_font(run: Any) -> None:
    run.font.name = CODE_FONT
    run.font.size = Pt(9.5)
    r_pr = run._element.get_or_add_rPr()
    fonts = r_pr.find(qn("w:rFonts"))
    if fonts is None:
        fonts = OxmlElement("w:rFonts")
        r_pr.insert(0, fonts)
    fonts.set(qn("w:eastAsia"), CODE_FONT)


def _shade(par: Any, fill: str) -> None:
    shd = OxmlElement("w:shd")
    shd.set(qn("w:val"), "clear")
    shd.set(qn("w:color"), "auto")
    shd.set(qn("w:fill"), fill)
    par._p.get_or_add_pPr().append(shd)


def _set_num(par: Any, num_id: int, ilvl: int) -> None:
    p_pr = par._p.get_or_add_pPr()
    num_pr = p_pr.get_or_add_numPr()
    num_pr.get_or_add_ilvl().val = ilvl
    num_pr.get_or_add_numId().val = num_id


def _set_east_asia_font(doc: Any, font: str) -> None:
    """Chinese text in Word looks right only with an East Asian font on the Normal style."""
    style = doc.styles["Normal"]
    r_pr = style.element.get_or_add_rPr()
    fonts = r_pr.find(qn("w:rFonts"))
    if fonts is None:
        fonts = OxmlElement("w:rFonts")
        r_pr.insert(0, fonts)
    fonts.set(qn("w:eastAsia"), font)
