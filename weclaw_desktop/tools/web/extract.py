"""Turn a fetched body into text the model can read: readable HTML text, pretty JSON, plain text.

Main-content extraction uses readability-lxml (a port of Mozilla's Readability on lxml), with the whole
visible page text as the fallback when the article heuristic finds too little.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import chardet  # installed with readability-lxml
import lxml.html
from lxml import etree
from readability import Document

#: Elements that never hold readable text.
DROP_TAGS = ("script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed", "form")
#: Page furniture dropped in the whole-page fallback.
CHROME_TAGS = ("nav", "header", "footer", "aside")
BLOCK_TAGS = frozenset(
    [
        "p",
        "div",
        "section",
        "article",
        "main",
        "li",
        "ul",
        "ol",
        "dl",
        "dt",
        "dd",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "pre",
        "blockquote",
        "table",
        "tr",
        "figure",
        "figcaption",
        "header",
        "footer",
        "nav",
        "aside",
        "address",
        "hr",
        "br",
        "td",
        "th",
        "caption",
        "summary",
        "details",
    ]
)
MIN_ARTICLE_CHARS = 200
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_\-]+)""", re.I)


@dataclass
class PageText:
    title: str
    text: str
    links: int
    method: str  # "readability" or "page"


def decode(body: bytes, declared: str | None, *, html: bool) -> str:
    """Decode with the declared charset, then a <meta> charset, then UTF-8, then detection (GBK pages)."""
    candidates: list[str] = []
    if declared:
        candidates.append(declared)
    if html:
        found = _META_CHARSET.search(body[:4096])
        if found:
            candidates.append(found.group(1).decode("ascii"))
    candidates.append("utf-8")
    for name in candidates:
        try:
            return body.decode(_normalise_charset(name))
        except (LookupError, UnicodeDecodeError):
            continue
    guess = chardet.detect(body[:65536]).get("encoding") or "utf-8"
    try:
        return body.decode(_normalise_charset(guess), errors="replace")
    except LookupError:
        return body.decode("utf-8", errors="replace")


def _normalise_charset(name: str) -> str:
    lowered = name.strip().lower()
    # GB2312 and GBK pages routinely use characters only GB18030 (a superset) defines.
    return "gb18030" if lowered in ("gb2312", "gbk", "x-gbk") else lowered


def html_to_text(html: str, base_url: str = "") -> PageText:
    """Title, readable text and link count of an HTML page."""
    if not html.strip():
        return PageText(title="", text="", links=0, method="page")
    try:
        root = lxml.html.document_fromstring(html)
    except (etree.ParserError, ValueError):
        return PageText(title="", text=_squeeze(html), links=0, method="page")
    title = _title(root)
    links = sum(1 for a in root.iter("a") if (a.get("href") or "").strip() and not a.get("href", "").startswith("#"))

    text = ""
    method = "readability"
    try:
        summary = Document(html, url=base_url or None).summary(html_partial=True)
        text = element_text(lxml.html.fragment_fromstring(summary, create_parent="div"))
    except Exception:  # readability raises bare Exceptions on odd markup; the fallback covers it
        text = ""
    if len(text) < MIN_ARTICLE_CHARS:
        for bad in root.xpath("//" + " | //".join(DROP_TAGS + CHROME_TAGS)):
            bad.drop_tree()
        body = root.find("body")
        page = element_text(body if body is not None else root)
        if len(page) > len(text):
            text, method = page, "page"
    return PageText(title=title, text=text, links=links, method=method)


def _title(root: lxml.html.HtmlElement) -> str:
    for xpath in ("//meta[@property='og:title']/@content", "//title/text()", "//h1//text()"):
        found = [t for t in root.xpath(xpath) if str(t).strip()]
        if found:
            return " ".join(str(found[0]).split())
    return ""


def element_text(element: lxml.html.HtmlElement) -> str:
    """Visible text with line breaks at block elements and blank lines between paragraphs."""
    for bad in element.xpath(".//" + " | .//".join(DROP_TAGS)):
        bad.drop_tree()
    pieces: list[str] = []

    def walk(el: etree._Element) -> None:
        tag = el.tag if isinstance(el.tag, str) else ""
        block = tag in BLOCK_TAGS
        if block:
            pieces.append("\n")
        if tag == "li":
            pieces.append("- ")
        if el.text and tag:
            pieces.append(el.text)
        for child in el:
            walk(child)
            if child.tail:
                pieces.append(child.tail)
        if block:
            pieces.append("\n")

    try:
        walk(element)
    except RecursionError:  # absurdly deep markup: plain text without layout
        return _squeeze(element.text_content())
    return _squeeze("".join(pieces))


def _squeeze(text: str) -> str:
    lines = [" ".join(line.split()) for line in text.splitlines()]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip()


def pretty_json(text: str) -> str | None:
    """Indented JSON, or None when ``text`` is not JSON."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return json.dumps(value, ensure_ascii=False, indent=2)


def describe_binary(content_type: str, length: int | None) -> str:
    """A sentence about a body the tool does not read."""
    size = f"{length:,} bytes" if length is not None else "unknown size"
    kind = content_type or "unknown type"
    if content_type == "application/pdf":
        what = "a PDF document"
    elif content_type.startswith("image/"):
        what = f"an image ({content_type.split('/', 1)[1].upper()})"
    elif content_type.startswith("audio/"):
        what = "an audio file"
    elif content_type.startswith("video/"):
        what = "a video file"
    elif content_type in ("application/zip", "application/x-7z-compressed", "application/gzip", "application/x-tar"):
        what = "an archive"
    else:
        what = "a binary file"
    return f"The address serves {what} ({kind}, {size}). Its content is not text, so it was not downloaded."
