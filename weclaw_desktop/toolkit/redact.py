"""Keep secrets out of logs, audit records, error summaries, model-visible text and stored answers.

Two kinds of masking, both applied by :func:`redact`:

- **Registered secrets** (API keys and passwords loaded from the keyring or taken from the environment)
  are replaced wherever they appear: as written, and encoded as base64 (standard and URL-safe, at any
  alignment inside a longer base64 text: a base64 dump of ``/proc/<pid>/environ`` is caught), hex (lower
  and upper case) and URL-encoded.
- **Token shapes** are masked even when unregistered: OpenAI ``sk-``/``sk-proj-``, GitHub ``gh[pousr]_``
  and ``github_pat_``, AWS ``AKIA``/``ASIA`` key ids and ``aws_secret_access_key``, npm ``_authToken``,
  Slack ``xox?-``, Google ``AIza``, JWTs, PEM private keys, ``Bearer`` headers, ``key: value`` lines whose key
  names a secret (``oauth_token:``, ``password=``, ``client_secret``...), and the password of a URL
  (``https://user:pass@host`` -> ``https://user:***@host``).

:class:`StreamRedactor` masks text that arrives in pieces (the model's streamed answer): it holds back
the unfinished last word, so a token is never shown half before it can be recognised.
"""

from __future__ import annotations

import base64
import binascii
import re
import threading
from urllib.parse import quote, quote_plus

MASK = "***"
MIN_SECRET = 6
MIN_ENCODED = 8  # shorter encoded cores would match by chance

#: Environment variable names that hold secrets: the API-key variables and any name containing these parts.
ALWAYS_SECRET_NAMES = frozenset({"WECLAW_API_KEY", "OPENAI_API_KEY"})
SECRET_NAME_PARTS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL")


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    return upper in ALWAYS_SECRET_NAMES or any(part in upper for part in SECRET_NAME_PARTS)


_lock = threading.Lock()
_secrets: set[str] = set()
_encoded: dict[str, list[str]] = {}  # secret -> its encodings (computed once per secret)

_KEY_NAMES = (
    r"api[_-]?key|apikey|access[_-]?key(?:[_-]?id)?|secret[_-]?access[_-]?key|secret[_-]?key|client[_-]?secret|"
    r"private[_-]?key|auth[_-]?token|_?authtoken|access[_-]?token|refresh[_-]?token|oauth[_-]?token|id[_-]?token|"
    r"token|secret|password|passwd|passphrase|pwd|credentials?"
)

#: (pattern, replacement) in order. Replacements keep the label so the text still reads.
#: Token shapes start with their literal prefix and check the word boundary behind it (``sk-(?<!\wsk-)`` is
#: ``\bsk-``): a pattern that begins with a literal is searched for with a fast scan, one that begins with
#: ``\b`` is tried at every position (~2 ms per pattern on a 100k-character answer).
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----.*?(?:-----END \1PRIVATE KEY-----|\Z)", re.DOTALL),
        r"-----BEGIN \1PRIVATE KEY----- *** -----END \1PRIVATE KEY-----",
    ),
    (re.compile(r"sk-(?<!\wsk-)(?:proj-|ant-|or-v1-)?[A-Za-z0-9_\-]{8,}"), "sk-***"),
    (re.compile(r"(gh(?<!\wgh)[pousr])_[A-Za-z0-9]{20,}\b"), r"\1_***"),
    (re.compile(r"github_pat_(?<!\wgithub_pat_)[A-Za-z0-9_]{20,}"), "github_pat_***"),
    (re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"), r"\1***"),
    (re.compile(r"xox(?<!\wxox)[abposr]-[A-Za-z0-9-]{10,}"), "xox-***"),
    (re.compile(r"AIza(?<!\wAIza)[0-9A-Za-z_\-]{30,}"), "AIza***"),
    (re.compile(r"eyJ(?<!\weyJ)[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), "eyJ***"),
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/\-]{8,}=*"), r"\1 ***"),
    # user:password@ in any URL-looking text (the user name stays; the password goes)
    (re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s/:@]+):[^\s/@]+@"), r"\1:***@"),
]

# key: value / key=value / "key": "value" where the key names a secret (oauth_token:, _authToken=...).
# Tried at every word start with a lazy prefix, it cost ~29 ms on a 100k-character answer (the other patterns
# together ~20 ms), so it runs only on the lines around a place where a key name meets ":" or "=" — which every
# match contains — and gives exactly what it gives on the whole text (a test compares the two).
_KEY_VALUE = re.compile(
    r"(?i)((?<![A-Za-z0-9])[A-Za-z0-9_.\-]*?(?:" + _KEY_NAMES + r")[\"']?\s*[:=]\s*[\"']?)"
    r"(?!\*\*\*)(?![0-9]+(?:[\s\"',;]|$))([^\s\"',;<>]{4,})"
)
_KEY_VALUE_MASK = r"\1***"
#: Every key name holds one of these (lower case): where none occurs, nothing can match.
_KEY_ANCHORS = ("key", "token", "secret", "pass", "pwd", "credential")
#: From an anchor: the rest of its word, then what a match needs after the key name (a quote, ":" or "=") and
#: can take after it (the value, which never holds a space).
_AFTER_ANCHOR = re.compile(r"[A-Za-z0-9_\-]*[\"']?\s*[:=]\s*[\"']?[^\s\"',;<>]*")


def _mask_key_values(text: str) -> str:
    """``_KEY_VALUE.sub`` over ``text``, run only on the windows that can hold a match: from the start of the line
    of a key name's anchor that is followed by ":" or "=" (a match's prefix never crosses a line) to the end of
    the value after it. Anchors are found with ``str.find`` (regex alternation at every position cost as much
    as the pattern itself)."""
    lower = text.lower()
    spots: list[tuple[int, int]] = []
    for anchor in _KEY_ANCHORS:
        i = lower.find(anchor)
        while i >= 0:
            tail = _AFTER_ANCHOR.match(text, i + len(anchor))
            if tail is not None:
                spots.append((text.rfind("\n", 0, i) + 1, tail.end()))
            i = lower.find(anchor, i + len(anchor))
    if not spots:
        return text
    windows: list[list[int]] = []
    for start, end in sorted(spots):
        if windows and start <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], end)
        else:
            windows.append([start, end])
    if not windows:
        return text
    parts: list[str] = []
    last = 0
    for start, end in windows:
        parts.append(text[last:start])
        parts.append(_KEY_VALUE.sub(_KEY_VALUE_MASK, text[start:end]))
        last = end
    parts.append(text[last:])
    return "".join(parts)


_KEY_BEFORE_VALUE = re.compile(r"(?i)(?:" + _KEY_NAMES + r"|bearer|basic)[\"']?\s*[:=]?\s*[\"']?\s*$")


def _encodings(value: str) -> list[str]:
    """``value`` as base64 (each alignment's stable core), hex and URL-encoded."""
    raw = value.encode("utf-8")
    out: set[str] = set()
    for shift in range(3):
        padded = b"\x00" * shift + raw
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = encode(padded).decode("ascii").rstrip("=")
            # the first group mixes the filler bytes; the last may mix the bytes after the secret
            start = 4 if shift else 0
            end = len(text) - (len(text) % 4 or 4) if (len(padded) % 3) else len(text)
            core = text[start:end]
            if len(core) >= MIN_ENCODED:
                out.add(core)
    out.add(binascii.hexlify(raw).decode())
    out.add(binascii.hexlify(raw).decode().upper())
    for quoted in (quote(value, safe=""), quote_plus(value, safe="")):
        if quoted != value:
            out.add(quoted)
    return [v for v in out if len(v) >= MIN_ENCODED]


def register_secret(value: str | None) -> None:
    """Remember a secret value so :func:`redact` removes it (and its encodings). Short values are ignored
    (too many false hits)."""
    if not value or len(value) < MIN_SECRET:
        return
    with _lock:
        _secrets.add(value)
        if value not in _encoded:
            _encoded[value] = _encodings(value)


def _current_variants() -> list[str]:
    """Every registered secret and its encodings, longest first."""
    with _lock:
        found = {v for s in _secrets for v in (s, *_encoded.get(s, []))}
    return sorted(found, key=len, reverse=True)


def known_secrets() -> frozenset[str]:
    with _lock:
        return frozenset(_secrets)


def forget_secrets() -> None:
    """Forget every registered secret (tests isolate themselves with it)."""
    with _lock:
        _secrets.clear()


def redact(text: str) -> str:
    if not text:
        return text
    for value in _current_variants():
        if value in text:
            text = text.replace(value, MASK)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return _mask_key_values(text)


_PREFIXES = (
    "sk-",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "AKIA",
    "ASIA",
    "xoxa-",
    "xoxb-",
    "xoxp-",
    "xoxo-",
    "xoxs-",
    "xoxr-",
    "AIza",
    "eyJ",
    "-----BEGIN",
)
_TAIL = re.compile(r"[A-Za-z0-9_\-+/=.:~%@]+$")


class StreamRedactor:
    """Masks a text that arrives in pieces (the model's streamed answer). :meth:`feed` returns what can be
    shown now, redacted; it holds back only an unfinished word that could still become a secret (the start
    of a token shape, of a registered secret, of a URL with a password, a "password:" waiting for its
    value, an open private-key block). :meth:`finish` returns the rest."""

    def __init__(self) -> None:
        self._pending = ""

    def feed(self, piece: str) -> str:
        self._pending += piece
        cut = self._safe_end(self._pending)
        ready, self._pending = self._pending[:cut], self._pending[cut:]
        return redact(ready)

    def finish(self) -> str:
        rest, self._pending = self._pending, ""
        return redact(rest)

    @staticmethod
    def _safe_end(text: str) -> int:
        begin = text.find("-----BEGIN")
        if begin >= 0 and "-----END" not in text[begin:]:
            return begin
        key = _KEY_BEFORE_VALUE.search(text)
        if key is not None:
            return key.start()
        tail = _TAIL.search(text)
        if tail is None:
            return len(text)
        word = tail.group(0)
        variants = _current_variants()
        risky = (
            "://" in word
            or any(word.startswith(p) or p.startswith(word) for p in _PREFIXES)
            or any(v.startswith(word) or word[-MIN_SECRET:] in v for v in variants)
        )
        return tail.start() if risky else len(text)
