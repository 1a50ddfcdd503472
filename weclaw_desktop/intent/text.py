"""Text preparation for routing: normalise, mask literal payloads, split into units, stem English.

A request is turned into a list of *units*: each Chinese character is a unit (no word segmentation) and
each English word is a unit, lower-cased and lightly stemmed ("zipping" -> "zip"). Keywords are split the
same way, so matching a keyword is matching a run of units: Chinese matches anywhere, English only on
word boundaries, and mixed text ("用word打开") works because the two scripts split apart.

Literal payloads are masked before matching, so the words inside them cannot route: file paths and names
("截图2.png" is not a screenshot request), web addresses, e-mail addresses and quoted text ('add "email
Tom" to my list' is a to-do, not an e-mail). Each mask leaves a marker unit and a flag in :class:`Cues`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache

_EXTENSIONS = (
    "txt|md|markdown|pdf|docx?|xlsx?|csv|tsv|pptx?|odt|ods|rtf|epub|"
    "png|jpe?g|gif|webp|heic|bmp|svg|tiff?|ico|psd|"
    "mp4|mov|mkv|avi|wmv|flv|webm|mp3|wav|flac|m4a|aac|ogg|"
    "zip|rar|7z|tar|gz|tgz|bz2|xz|"
    "py|ipynb|js|ts|jsx|tsx|java|cpp|go|rs|rb|php|swift|kt|sh|bat|ps1|sql|"
    "json|ya?ml|toml|ini|cfg|conf|xml|html?|css|log|db|sqlite|"
    "exe|msi|dmg|pkg|apk|ipa|iso|deb|rpm"
)
# File kinds that hint at a need: a marker unit (‹archive›, ‹data›) is added for the keyword tables.
EXTENSION_MARKERS = {
    **dict.fromkeys(("zip", "rar", "7z", "tar", "gz", "tgz", "bz2", "xz"), "‹archive›"),
    **dict.fromkeys(("csv", "tsv", "xlsx", "xls", "json"), "‹data›"),
    **dict.fromkeys(("py", "ipynb"), "‹pyscript›"),
    **dict.fromkeys(("sh", "bat", "ps1"), "‹shscript›"),
}
_B = r"""\s"“”'‘’「」『』《》()（）\[\]【】,，。;；:：!！?？、"""  # characters that end a path or name

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL = re.compile(
    r"(?:https?://|www\.)[^" + _B + r"]+"
    r"|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|cn|net|org|io|edu|gov|dev|app|ai|co|me|info|tv)\b(?:/[^" + _B + r"]*)?"
)
_WIN_PATH = re.compile(r"\b[a-z]:[\\/][^" + _B + r"]*")
_UNIX_PATH = re.compile(r"(?:(?<![\w/])~|(?<![\w~.])\.{0,2})/[^" + _B + r"]+")
_NAME_SPACED = re.compile(r"(?:(?<=[" + _B + r"])|^)[^" + _B + r"/\\]+\.(?:" + _EXTENSIONS + r")\b")
_NAME_ASCII = re.compile(r"[a-z0-9_\-]+(?:\.[a-z0-9_\-]+)*\.(?:" + _EXTENSIONS + r")\b")
_EXT = re.compile(r"\.(" + _EXTENSIONS + r")\b")
_QUOTED = re.compile(
    r"“[^”]{1,80}”|「[^」]{1,80}」|『[^』]{1,80}』|\"[^\"]{1,80}\"|(?:(?<=\s)|^)'[^']{2,80}'(?=[\s,.;:!?]|$)"
)
_MATH = re.compile(
    r"\d[\d,.]*\s*(?:[+*×÷^]|\*\*)\s*[\d(π]|\d\s+[-/x]\s+\d|\b(?:sqrt|sin|cos|tan|log|ln|exp)\s*\(|√|π|\d\s*!|\d\s*%"
)
_CN_NUM = "零一二两三四五六七八九十"
_CLOCK = re.compile(
    r"\d{1,2}\s*点(?!\d)|(?:早上|上午|中午|下午|傍晚|晚上|凌晨|今晚|明早|明晚|夜里)[" + _CN_NUM + r"]{1,3}点"
    r"|[" + _CN_NUM + r"]{1,3}点(?:半|钟|一刻|[" + _CN_NUM + r"]{1,3}分)"
    r"|\b\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)|\b\d{1,2}:\d{2}\b|\b(?:noon|midnight)\b"
)
_HAS_DIGIT = re.compile(r"\d")
_HAS_QUOTE = re.compile("[\"'“「『]")
_UNIT = re.compile(r"‹[a-z_]+›|[a-z]+|[0-9]+(?:\.[0-9]+)?|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@dataclass
class Prepared:
    """A request ready for matching."""

    text: str  # normalised, payloads masked
    units: list[str]
    has_path: bool = False
    has_url: bool = False
    has_email: bool = False
    has_quote: bool = False
    has_math: bool = False
    has_clock: bool = False  # a time of day ("八点半", "6pm", "9:30"): often a reminder
    extensions: set[str] = field(default_factory=set)


def normalise(text: str) -> str:
    """NFKC (full-width letters and digits become ASCII), lower case, one space between words."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def prepare(text: str) -> Prepared:
    s = normalise(text)
    p = Prepared(text="", units=[])
    # each pattern runs only when the character it needs is there: most requests hold no path or address
    if "@" in s:
        s, n = _EMAIL.subn(" ‹email› ", s)
        p.has_email = n > 0
    if "." in s:
        s, n = _URL.subn(" ‹url› ", s)
        p.has_url = n > 0
        p.extensions.update(_EXT.findall(s))
    hits = 0
    if ":" in s:
        s, n = _WIN_PATH.subn(" ‹path› ", s)
        hits += n
    if "/" in s:
        s, n = _UNIX_PATH.subn(" ‹path› ", s)
        hits += n
    if p.extensions:
        s, n = _NAME_SPACED.subn(" ‹path› ", s)
        hits += n
        s, n = _NAME_ASCII.subn(" ‹path› ", s)
        hits += n
    p.has_path = hits > 0
    digits = _HAS_DIGIT.search(s) is not None
    p.has_math = (digits or "π" in s or "√" in s) and _MATH.search(s) is not None
    p.has_clock = (digits or "点" in s or "noon" in s or "midnight" in s) and _CLOCK.search(s) is not None
    if _HAS_QUOTE.search(s):
        s, n = _QUOTED.subn(" ‹quote› ", s)
        p.has_quote = n > 0
    if p.has_math:
        s += " ‹math›"
    if p.has_clock:
        s += " ‹clock›"
    for marker in sorted({EXTENSION_MARKERS[e] for e in p.extensions if e in EXTENSION_MARKERS}):
        s += " " + marker
    p.text = s
    p.units = units_of(s)
    return p


def units_of(text: str) -> list[str]:
    """Split already-normalised text into units (CJK characters, stemmed English words, '#' for numbers)."""
    out = []
    for tok in _UNIT.findall(text):
        c = tok[0]
        if "a" <= c <= "z":
            out.append(stem(tok))
        elif "0" <= c <= "9":
            out.append("#")
        else:
            out.append(tok)
    return out


def keyword_units(phrase: str) -> list[list[str]]:
    """A keyword as segments of units; ``*`` in a keyword allows a short gap ("发*手机")."""
    return [units_of(normalise(part)) for part in phrase.split("*") if part.strip()]


@lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """A light English stemmer: plural, -ing, -ed, final e. Only needs to be consistent, not correct."""
    w = word
    if len(w) <= 3:
        return w
    if w.endswith(("ies", "ied")) and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("ing") and len(w) > 5:
        w = _undouble(w[:-3])
    elif w.endswith("ed") and len(w) > 4:
        w = _undouble(w[:-2])
    elif w.endswith("s") and not w.endswith(("ss", "us", "is", "ws", "as")):
        w = w[:-1]
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return w


def _undouble(w: str) -> str:
    if len(w) > 2 and w[-1] == w[-2] and w[-1] not in "lsz":
        return w[:-1]
    return w


def is_cjk(unit: str) -> bool:
    return len(unit) == 1 and unit >= "\u3400"
