"""Text preparation for routing: normalise, mask literal payloads, split into units and clauses, stem English.

A request is turned into a list of *units*: each Chinese character is a unit (no word segmentation) and
each English word is a unit, lower-cased and lightly stemmed ("zipping" -> "zip"). Keywords are split the
same way, so matching a keyword is matching a run of units: Chinese matches anywhere, English only on
word boundaries, and mixed text ("用word打开") works because the two scripts split apart.

Literal payloads are masked before matching, so the words inside them cannot route: code (inline and
fenced), pasted stack traces, file paths and names ("截图2.png" is not a screenshot request), web and
e-mail addresses, quoted text in every quote style ('add "email Tom" to my list' is a to-do, not an
e-mail; 「」『』“”‘’《》 and quotes that follow Chinese text directly), and the text introduced by a colon
when what comes before the colon says it is content ("translate this: …", "这句什么意思：…", "copy this to
my clipboard: …"). Each mask leaves a marker unit in place and a flag in :class:`Prepared`. A bare format
name ("tar.gz", ".docx") is a file kind, not a path: it gets the kind's marker but no ‹path›.

The units are then cut into *clauses* (sentence punctuation, commas, "and then", "然后", "顺便", ...), so
the form of each clause (question, request, writing, negation) can be judged on its own.
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

# Each pattern starts only where its first character can be (a lookbehind or lookahead), so the engine
# does not re-scan every word from every letter: routing time grows with the request, not its square.
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL = re.compile(
    r"(?:https?://|www\.)[^" + _B + r"]+"
    r"|\b(?=[a-z0-9-]+\.)[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|cn|net|org|io|edu|gov|dev|app|ai|co|me|info|tv)\b(?:/[^"
    + _B
    + r"]*)?"
)
# a dotfile is a file name: .bashrc, .zshrc, .bash_profile, .gitignore, .env, .ssh, .gitconfig
_DOTFILE = re.compile(r"(?<![\w./~])\.(?:[a-z]+rc|[a-z_]*profile|[a-z]*ignore|env|ssh|gitconfig|config)\b")
_WIN_PATH = re.compile(r"\b[a-z]:[\\/][^" + _B + r"]*")
# a path holds a letter somewhere ("*/5" in a cron schedule and "1/2" are not paths)
_UNIX_PATH = re.compile(
    r"(?=[~./])(?:(?<![\w/])~|(?<![\w~.*])\.{0,2})/(?=[^" + _B + r"]*[a-z\u4e00-\u9fff])[^" + _B + r"]+"
)
_NAME_SPACED = re.compile(
    r"(?:(?<=[" + _B + r"])|^)(?=[^" + _B + r"/\\]*\.)[^" + _B + r"/\\]+\.(?:" + _EXTENSIONS + r")\b"
)
_NAME_ASCII = re.compile(
    r"(?<![a-z0-9_\-])(?=[a-z0-9_\-]+\.)[a-z0-9_\-]+(?:\.[a-z0-9_\-]+)*\.(?:" + _EXTENSIONS + r")\b"
)
_EXT = re.compile(r"\.(" + _EXTENSIONS + r")\b")
_EXT_ONLY = re.compile(_EXTENSIONS)
_Q = 300  # longest quoted span masked
_QUOTED = re.compile(
    "(?=[“「『‘《\"'])(?:"
    + "|".join(f"{o}[^{c}]{{1,{_Q}}}{c}" for o, c in ("“”", "「」", "『』", "‘’", "《》", '""'))
    # an ASCII single quote opens after a space, Chinese text or punctuation, may hold apostrophes
    # ("'don't touch it'"), and closes where no letter follows
    + r"|(?:(?<=[\s\u3400-\u9fff(（:：,，、])|^)'(?:[^'\n]|'(?=[a-z]))"
    + f"{{1,{_Q}}}?'(?![a-z0-9])"
    + ")"
)
_MATH = re.compile(
    r"(?=[0-9打√πdmsctle])(?:"
    r"打\s*[\d一二三四五六七八九]{1,2}(?:\.\d)?\s*折|\d\s*折|"
    r"\d\s*(?:times|multiplied by|divided by|plus|minus|to the(?: power of)?)\s+\d|\b(?:divide|multiply)\s+[\d,.]+\s+(?:by|with)\s+\d|"
    r"\d[\d,.]*\s*(?:[+*×÷^]|\*\*)\s*[\d(π]|\d\s+[-/x]\s+\d|\b(?:sqrt|sin|cos|tan|log|ln|exp)\s*\(|√|π|\d\s*!|\d\s*%"
    r")"
)
# code: fenced blocks (any language tag) and inline backticks; Python is told apart by its tag or first word
_FENCE = re.compile(r"```[ \t]*([\w+#-]*)[^\n`]*\n?(.*?)(?:```|\Z)", re.S)
_CODE = re.compile(r"`{1,3}([^`]{1,300})`{1,3}")
_FLAGS = re.compile(r"(?<![\w./-])[a-z][\w.]*(?:\s+-{1,2}[a-z][\w=-]*)+")
_PYCODE = re.compile(r"\s*(?:import |from \w+ import |print\(|def |class |lambda |for \w+ in |\w+ = )")
_PYTAGS = frozenset({"python", "py", "python3", "ipython", "pycon"})
# pasted stack traces and error output: a Python traceback to its end, or two or more frame lines
_TRACE = re.compile(
    r"traceback \(most recent call last\):.*"
    r"|(?:^[ \t]*(?:file \"[^\"]+\", line \d+.*|at [\w$.<>]+\(.*\)|#\d+\s+0x[0-9a-f]+.*)\n?){2,}"
    r"(?:^[\w.]*(?:error|exception)\b.*\n?)?",
    re.S | re.M | re.I,
)
# a calendar date: 2026-03-15, 2026/3/15, 2026年3月15日, 3月15号
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sept?|oct|nov|dec)[a-z]*\.?"
_DATE = re.compile(
    r"(?=[\djfmasond])(?:\b\d{1,2}(?:st|nd|rd|th)?\s+"
    + _MONTH
    + r",?\s+\d{4}\b|\b"
    + _MONTH
    + r"\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}\b"
    r"|\b\d{4}[-/.]\d{1,2}[-/.]\d{1,2}\b|\d{4}\s*年\s*\d{1,2}\s*月|\d{1,2}\s*月\s*\d{1,2}\s*[日号])"
)
# Text introduced by a colon is content when the words before the colon say so: a request to rework it
# ("translate into English: remind me later"), to explain it ("这句什么意思：…", "what does this mean: …") or
# to put it somewhere ("copy this to my clipboard: …", "待办里加一条：…"). The head keeps routing; the
# content becomes ‹quote›. A bare label ("note: email Tom") or a list of steps ("do the following: …")
# introduces requests, not content, and is left alone.
_REWORK_WORDS = (
    r"翻译|润色|改写|改得|改成|校对|纠正|语法|rewrite|rephrase|proofread|polish|translate|grammar|sound|more formal|"
    r"friendlier|shorten|simplify|polite|nicer|professional|casual|formal|summari[sz]e|title|起.{0,2}标题|总结|概括|"
    r"续写|扩写|缩写|改短|改长|客气"
)
_CONTENT_WORDS = (
    r"意思|解释|说的是|这句|这段|这些|这条|这个|以下|如下|下面|下列|报错|错误|内容|写着|一条|一句|复制|拷贝|粘贴|剪贴板|"
    r"记下|记一下|存|加上|加一|mean|means|meaning|explain|this|these|the following|below|error|says|saying|text|"
    r"message|copy|paste|clipboard|add|save|put|reply|answer|quote|line"
)
_COLON = re.compile(r"(?<!\d):|：")  # not the colon of a time ("9:30")
_REWORK = re.compile(_REWORK_WORDS)
_CONTENT = re.compile(_CONTENT_WORDS)
_STEPS = re.compile(r"\bdo (?:this|these|the following)\b|几件事|这几步|以下几|步骤|steps?\b|tasks?\b")
_CN_NUM = "零一二两三四五六七八九十"
_CLOCK = re.compile(
    r"(?=[0-9nma" + _CN_NUM + "早上中下傍晚凌今明夜])(?:"
    r"\d{1,2}\s*点(?!\d)|(?:早上|上午|中午|下午|傍晚|晚上|凌晨|今晚|明早|明晚|夜里)[" + _CN_NUM + r"]{1,3}点"
    r"|[" + _CN_NUM + r"]{1,3}点(?:半|钟|一刻|[" + _CN_NUM + r"]{1,3}分)"
    r"|\b\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)|\b\d{1,2}:\d{2}\b|\b(?:noon|midnight)\b"
    # "at 3", "at 6 o'clock": an hour after "at", not an amount ("at 3%", "at 3 dollars")
    r"|\bat\s+\d{1,2}(?![\d.,%:])(?:\s*o'clock)?(?!\s*(?:%|percent|dollars?|euros?|yuan|km|kg|miles?|times|degrees?|x\b))\b"
    r")"
)
_HAS_DIGIT = re.compile(r"\d")
_HAS_QUOTE = re.compile("[\"'“「『‘《]")
_UNIT = re.compile(r"‹[a-z_]+›|[a-z]+|[0-9]+(?:\.[0-9]+)?|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# Clause boundaries: sentence punctuation, a comma not between digits ("4, 8, 15"), and the words that
# join two requests ("zip it and then mail it", "查一下天气，顺便提醒我带伞"); a joining word stays, at the
# start of the next clause. One regex finds units and punctuation together.
_TOKEN = re.compile(
    r"([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff])|([a-z]+|‹[a-z_]+›|[0-9]+(?:\.[0-9]+)?)"
    r"|([。！？!?；;\n]+|(?<!\d),|,(?!\s*\d)|，)"
)  # Chinese character | word, marker or number | clause punctuation
JOIN_EN = frozenset({"and", "then", "also", "but", "plus"})
JOIN_ZH = frozenset({"然后", "顺便", "并且", "另外", "接着", "同时", "还有", "并把", "并将", "再把"})
_JOIN_ZH_SECOND = frozenset(w[1] for w in JOIN_ZH)


@dataclass
class Prepared:
    """A request ready for matching."""

    text: str  # normalised, payloads masked
    units: list[str]
    clauses: list[tuple[int, int]] = field(default_factory=list)  # (start, end) unit spans, in order
    has_path: bool = False
    has_url: bool = False
    has_email: bool = False
    has_quote: bool = False
    rework: bool = False  # "translate this: ...": the text after the colon is to be reworked by the model
    has_paste: bool = False  # a pasted stack trace or error output
    has_math: bool = False
    has_clock: bool = False  # a time of day ("八点半", "6pm", "9:30"): often a reminder
    has_date: bool = False  # a calendar date ("2026-03-15", "3月15号")
    has_code: bool = False  # code: ‹pycode› for a Python snippet, ‹code› for a command or other code
    extensions: set[str] = field(default_factory=set)  # file kinds named, as paths or bare ("tar.gz")

    @property
    def concrete(self) -> bool:
        """Names something tools act on outright: a path, a web address or an e-mail address."""
        return self.has_path or self.has_url or self.has_email


def normalise(text: str) -> str:
    """NFKC (full-width letters and digits become ASCII), lower case, one space between words."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def _code_marker(tag: str, body: str) -> str:
    return " ‹pycode› " if tag.lower() in _PYTAGS or _PYCODE.match(body) else " ‹code› "


def _mask_blocks(text: str, p: Prepared) -> str:
    """Masks that need the line structure: fenced code and pasted traces (before lines are joined)."""
    if "```" in text:
        text, n = _FENCE.subn(lambda m: _code_marker(m.group(1), m.group(2)) + "\n", text)
        p.has_code = p.has_code or n > 0
    if "\n" in text or "traceback" in text.lower():
        text, n = _TRACE.subn(" ‹paste› \n", text)
        p.has_paste = n > 0
    return text


def _name(m: re.Match[str], p: Prepared, hits: list[int]) -> str:
    """A file name is a path; a bare format name ("tar.gz", ".docx") is only a file kind."""
    name = m.group(0)
    parts = [x for x in name.split(".") if x]
    if all(_EXT_ONLY.fullmatch(x) for x in parts):
        return " " + " ".join(parts) + " " + _kind_markers(parts)
    hits.append(1)
    return " ‹path› " + _kind_markers(_EXT.findall(name)[-1:])


def _kind_markers(exts: list[str]) -> str:
    return " ".join(sorted({EXTENSION_MARKERS[e] for e in exts if e in EXTENSION_MARKERS})) + " "


def _path(m: re.Match[str], hits: list[int]) -> str:
    hits.append(1)
    return " ‹path› " + _kind_markers(_EXT.findall(m.group(0))[-1:])


def prepare(text: str) -> Prepared:
    p = Prepared(text="", units=[])
    if "```" in text or "\n" in text or "raceback" in text:
        text = _mask_blocks(text, p)
    if "\n" in text or "\r" in text:
        s = " ; ".join(line for line in map(normalise, text.splitlines()) if line)
    else:
        s = normalise(text)
    if "`" in s:
        s, n = _CODE.subn(lambda m: _code_marker("", m.group(1)), s)
        p.has_code = p.has_code or n > 0
    if " -" in s:  # a command typed without backticks: a word and its flags ("run df -h", "ls -la")
        s, n = _FLAGS.subn(" ‹code› ", s)
        p.has_code = p.has_code or n > 0
    # each pattern runs only when the character it needs is there: most requests hold no path or address
    if "@" in s:
        s, n = _EMAIL.subn(" ‹email› ", s)
        p.has_email = n > 0
    if "." in s:
        s, n = _URL.subn(" ‹url› ", s)
        p.has_url = n > 0
        p.extensions.update(_EXT.findall(s))
    hits: list[int] = []
    if "." in s:
        s = _DOTFILE.sub(lambda m: _path(m, hits), s)
    if ":" in s:
        s = _WIN_PATH.sub(lambda m: _path(m, hits), s)
    if "/" in s:
        s = _UNIX_PATH.sub(lambda m: _path(m, hits), s)
    if p.extensions:
        s = _NAME_SPACED.sub(lambda m: _name(m, p, hits), s)
        s = _NAME_ASCII.sub(lambda m: _name(m, p, hits), s)
    p.has_path = bool(hits)
    digits = _HAS_DIGIT.search(s) is not None
    if ":" in s or "：" in s:
        s = _mask_colon_content(s, p)
    if _HAS_QUOTE.search(s):
        s, n = _QUOTED.subn(" ‹quote› ", s)
        p.has_quote = p.has_quote or n > 0
    # markers go right after what they mark, so they stay in its clause
    if digits or "π" in s or "√" in s or "折" in s:
        s, n = _MATH.subn(r"\g<0> ‹math› ", s, count=1)
        p.has_math = n > 0
    if digits:  # ISO, Chinese and English dates ("2026-03-15", "3月15号", "1 jan 2000", "march 3rd, 2027")
        s, n = _DATE.subn(r"\g<0> ‹date› ", s, count=1)
        p.has_date = n > 0
    if digits or "点" in s or "noon" in s or "midnight" in s:
        s, n = _CLOCK.subn(r"\g<0> ‹clock› ", s, count=1)
        p.has_clock = n > 0
    p.text = s
    p.units, p.clauses = clauses_of(s)
    return p


_SENTENCE_END = re.compile(r"(?<=[.!?。！？;；])\s+(?=\S)|(?<=[。！？；])")
_MARKERS_ONLY = re.compile(r"^(?:\s|‹(?:url|path|email)›|[,，.。!?])*$")


def _mask_colon_content(s: str, p: Prepared) -> str:
    """The content after the colon is masked to the end of its sentence; a lone address or path after the
    colon ("tell me if it's legit: https://…") is what the request acts on, and stays."""
    colon = _COLON.search(s)
    if colon is None or colon.start() > 100:
        return s
    head, body = s[: colon.start()], s[colon.end() :]
    if len(body.strip()) < 2:
        return s
    rework = _REWORK.search(head) is not None
    if not rework and (_CONTENT.search(head) is None or _STEPS.search(head)):
        return s
    end = _SENTENCE_END.search(body)
    content, rest = (body[: end.start()], body[end.end() :]) if end else (body, "")
    if _MARKERS_ONLY.match(content):
        return s
    p.has_quote = True
    p.rework = p.rework or rework
    return head + " ‹quote› " + ("; " + rest if rest else "")


def clauses_of(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """The units of ``text`` and its clauses as (start, end) spans of those units (empty clauses dropped)."""
    units: list[str] = []
    cuts: list[int] = []  # unit positions where a clause starts
    abbreviations = ABBREVIATIONS
    prev_cjk = ""
    append = units.append
    join_second, join_zh, join_en = _JOIN_ZH_SECOND, JOIN_ZH, JOIN_EN
    contractions = CONTRACTIONS
    for cjk, tok, punct in _TOKEN.findall(text):
        if cjk:
            if cjk in join_second and prev_cjk + cjk in join_zh:
                cuts.append(len(units) - 1)
            append(cjk)
            prev_cjk = cjk
            continue
        prev_cjk = ""
        if punct:
            cuts.append(len(units))
            continue
        c = tok[0]
        if "a" <= c <= "z":
            if tok in join_en:
                cuts.append(len(units))
            parts = contractions.get(tok)
            if parts is None:
                append(stem(abbreviations.get(tok, tok)))
            else:
                units.extend(parts)
        elif "0" <= c <= "9":
            append("#")
        else:
            append(tok)
    spans: list[tuple[int, int]] = []
    start = 0
    for cut in (*cuts, len(units)):
        if cut > start:
            spans.append((start, cut))
            start = cut
    return units, spans


# contractions typed without the apostrophe, read as with it ("dont" = "don't", "whats" = "what's")
CONTRACTIONS = {
    "dont": ("don", "t"), "doesnt": ("doesn", "t"), "didnt": ("didn", "t"), "cant": ("can", "t"),
    "wont": ("won", "t"), "isnt": ("isn", "t"), "arent": ("aren", "t"), "wasnt": ("wasn", "t"),
    "im": ("i", "m"), "ive": ("i", "ve"), "whats": ("what", "s"), "thats": ("that", "s"),
    "hows": ("how", "s"), "wheres": ("where", "s"), "whos": ("who", "s"), "youre": ("you", "re"),
}  # fmt: skip
# chat shorthand, read as the word it stands for ("in 45 min", "screenshot pls", "remind me tmrw")
ABBREVIATIONS = {
    "min": "minute", "mins": "minutes", "hr": "hour", "hrs": "hours", "sec": "second", "secs": "seconds",
    "pls": "please", "plz": "please", "u": "you", "ur": "your", "tmrw": "tomorrow", "tmr": "tomorrow",
    "msg": "message", "pic": "picture", "pics": "pictures", "approx": "approximately",
}  # fmt: skip


def units_of(text: str) -> list[str]:
    """Split already-normalised text into units (CJK characters, stemmed English words, '#' for numbers)."""
    out = []
    abbreviations = ABBREVIATIONS
    for tok in _UNIT.findall(text):
        c = tok[0]
        if "a" <= c <= "z":
            parts = CONTRACTIONS.get(tok)
            if parts is None:
                out.append(stem(abbreviations.get(tok, tok)))
            else:
                out.extend(parts)
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
