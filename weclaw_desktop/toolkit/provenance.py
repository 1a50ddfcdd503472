"""Provenance of a conversation: what untrusted content the model has seen, and what the user wrote.

A turn starts with the untrusted sources already in the conversation the model sees (earlier turns' web
pages, MCP results, files from the phone, pasted text) and adds one for each untrusted result of this
turn. The loop hands the dispatcher a :meth:`Provenance.snapshot` per round: calls of one round were
written by the model before it saw that round's results, so they are judged by what it had seen.

"Written by the user" is what the approval rule exempts from egress: a URL or address that appears in the
user's own messages of this chat (``https://`` added when the user left it out; the fragment ignored).
A URL the model built itself (``https://attacker/c?d=<token>``) is never the user's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from urllib.parse import urlsplit, urlunsplit

from weclaw_desktop.toolkit.manifest import LocalizedText

#: Words that look like URLs or addresses in a user's message: with a scheme, or a domain with a dot.
_URL = re.compile(
    r"(?i)\b(?:https?://[^\s<>\"'`，。、）)]+|(?:[a-z0-9-]+\.)+[a-z]{2,}(?::\d+)?(?:/[^\s<>\"'`，。、）)]*)?)"
)
_EMAIL = re.compile(r"(?i)\b[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}\b")


@dataclass(frozen=True)
class UntrustedSource:
    """One piece of untrusted content the model saw."""

    function: str  # the call that brought it in ('' for pasted text)
    tool: str = ""
    label: LocalizedText | None = None  # what the chat did: "read a web page"
    detail: str = ""  # the URL or file, shortened
    earlier: bool = False  # it came in an earlier turn of this chat


@dataclass
class Provenance:
    """The provenance state of one turn (see the module docstring)."""

    user_text: list[str] = field(default_factory=list)
    sources: list[UntrustedSource] = field(default_factory=list)

    @property
    def tainted(self) -> bool:
        return bool(self.sources)

    def add(self, source: UntrustedSource) -> None:
        self.sources.append(source)
        self.__dict__.pop("_user_urls", None)

    def add_user_text(self, text: str) -> None:
        self.user_text.append(text)
        self.__dict__.pop("_user_urls", None)
        self.__dict__.pop("_user_addresses", None)

    def snapshot(self) -> Provenance:
        return Provenance(list(self.user_text), list(self.sources))

    @cached_property
    def _user_urls(self) -> frozenset[str]:
        found: set[str] = set()
        for text in self.user_text:
            for match in _URL.finditer(text):
                word = match.group(0).rstrip(".,;:!?")
                if "@" in word.split("/", 1)[0] and "://" not in word:
                    continue  # an e-mail address, not a host
                found.add(normalise_url(word))
        return frozenset(found)

    @cached_property
    def _user_addresses(self) -> frozenset[str]:
        return frozenset(m.group(0).casefold() for text in self.user_text for m in _EMAIL.finditer(text))

    def user_wrote(self, value: str) -> bool:
        """True when ``value`` (a URL or an e-mail address) appears in the user's messages of this chat."""
        text = value.strip()
        if not text:
            return False
        if _EMAIL.fullmatch(text) or text.lower().startswith("mailto:"):
            return text.lower().removeprefix("mailto:").casefold() in self._user_addresses
        return normalise_url(text) in self._user_urls

    def first(self) -> UntrustedSource | None:
        """The source to name in an approval reason: this turn's latest, else the latest earlier one."""
        current = [s for s in self.sources if not s.earlier]
        chosen = current or self.sources
        return chosen[-1] if chosen else None


def normalise_url(text: str) -> str:
    """One spelling per URL: scheme added (https) and lower-cased, host lower-cased, default port and
    fragment dropped, an empty path written as '/'. Query strings are kept: they carry data."""
    raw = text.strip()
    if "://" not in raw:
        raw = "https://" + raw
    try:
        parts = urlsplit(raw)
        host = (parts.hostname or "").lower()
        port = parts.port
    except ValueError:
        return raw
    scheme = parts.scheme.lower()
    if port and not ((scheme == "https" and port == 443) or (scheme == "http" and port == 80)):
        host = f"{host}:{port}"
    if parts.username or parts.password:
        host = f"{parts.username or ''}{':' + parts.password if parts.password else ''}@{host}"
    if scheme == "http":
        scheme = "https"  # the user writing http://x or x means the same site; the model may pick either
    return urlunsplit((scheme, host, parts.path or "/", parts.query, ""))
