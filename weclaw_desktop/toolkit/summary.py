"""Plain words for what a call will do, from the action's ``safety.summary`` in tools.json.

A summary is a template per language with ``{fact:argument}`` fields: "delete {count:path} in
{parent:path}" becomes "delete a folder with 3 files in ~/Projects". The facts are the small fixed set
below (:data:`FACTS`); the words they add come from the translation catalogue, the template from
tools.json, so a summary is translated like every other text. Counting a folder stops early (the dialog
must open at once), and a summary never fails: an argument that is missing shows as "?".
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

from weclaw_desktop.i18n import is_chinese, language, translate
from weclaw_desktop.toolkit.manifest import CommandHint, LocalizedText

FIELD = re.compile(r"\{(\w+):(\w+)\}")
FACTS = frozenset({"path", "name", "parent", "count", "list", "device", "command", "host", "text"})
COUNT_LIMIT = 2000
TEXT_LIMIT = 60

Resolver = Callable[[str], str]


def render(
    template: LocalizedText | None,
    arguments: Mapping[str, Any],
    *,
    commands: list[CommandHint] | None = None,
    fallback: str = "",
    resolvers: Mapping[str, Resolver] | None = None,
    lang: str | None = None,
) -> str:
    """The summary in ``lang`` (default: the UI language); ``fallback`` when the action declares none."""
    if template is None:
        return fallback
    text = template.get(lang or language())
    facts = _Facts(arguments, commands or [], resolvers or {}, lang or language())
    return " ".join(FIELD.sub(lambda m: facts.value(m.group(1), m.group(2)), text).split())


def fields(template: LocalizedText) -> Iterator[tuple[str, str]]:
    """(fact, argument) of every field in both languages (the validator checks them)."""
    for text in (template.en, template.zh):
        for match in FIELD.finditer(text):
            yield match.group(1), match.group(2)


class _Facts:
    def __init__(
        self, arguments: Mapping[str, Any], commands: list[CommandHint], resolvers: Mapping[str, Resolver], lang: str
    ) -> None:
        self.arguments = arguments
        self.commands = commands
        self.resolvers = resolvers
        self.zh = is_chinese(lang)
        self.lang = lang

    def tr(self, key: str, **args: Any) -> str:
        return translate(self.lang, key, **args)

    def value(self, fact: str, arg: str) -> str:
        raw = self.arguments.get(arg)
        method = getattr(self, f"_{fact}", None)
        if method is None:
            return "?"
        try:
            return str(method(raw))
        except (OSError, ValueError, TypeError):
            return "?"

    def _first(self, raw: Any) -> str:
        if isinstance(raw, list):
            return str(raw[0]) if raw else ""
        return "" if raw is None else str(raw)

    def _path(self, raw: Any) -> str:
        if raw in (None, "", []):
            return "~"
        first = short_path(self._first(raw))
        more = len(raw) - 1 if isinstance(raw, list) else 0
        return first + (self.tr("summary.more", n=more) if more else "")

    def _name(self, raw: Any) -> str:
        first = self._first(raw)
        return os.path.basename(first.rstrip("/\\")) or first or "?"

    def _parent(self, raw: Any) -> str:
        first = os.path.expanduser(self._first(raw) or "~")
        return short_path(os.path.dirname(os.path.normpath(first)) or first)

    def _count(self, raw: Any) -> str:
        if isinstance(raw, list):
            if len(raw) != 1:
                return self.tr("summary.items", n=len(raw))
            raw = raw[0]
        if not raw:
            return "?"
        path = os.path.expanduser(str(raw))
        if not os.path.isabs(path):
            path = os.path.join(os.path.expanduser("~"), path)
        if os.path.isdir(path) and not os.path.islink(path):
            n = count_files(path)
            key = "summary.folder_many" if n >= COUNT_LIMIT else "summary.folder"
            return self.tr(key, n=n)
        return self.tr("summary.files", n=1)

    def _list(self, raw: Any) -> str:
        values = [str(v) for v in raw] if isinstance(raw, list) else ([str(raw)] if raw else [])
        shown = ", ".join(values[:3])
        return shown + (self.tr("summary.more", n=len(values) - 3) if len(values) > 3 else "") if values else "?"

    def _device(self, raw: Any) -> str:
        resolver = self.resolvers.get("device")
        if resolver is not None:
            return resolver(str(raw or ""))
        return str(raw) if raw else self.tr("summary.your_phone")

    def _command(self, raw: Any) -> str:
        code = str(raw or "")
        phrases = [h.phrase.get("zh" if self.zh else "en") for h in self.commands if re.search(h.pattern, code, re.I)]
        return "".join(phrases[:2]) if self.zh else "; ".join(phrases[:2])

    def _host(self, raw: Any) -> str:
        text = self._first(raw)
        try:
            return urlsplit(text if "://" in text else "https://" + text).hostname or text
        except ValueError:
            return text

    def _text(self, raw: Any) -> str:
        text = " ".join(self._first(raw).split())
        return text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 1] + "…"


def short_path(text: str) -> str:
    """``/home/me/Projects`` -> ``~/Projects``."""
    if not text:
        return text
    path = os.path.normpath(os.path.expanduser(text))
    home = os.path.expanduser("~")
    if path == home:
        return "~"
    if path.startswith(home + os.sep):
        return "~" + os.sep + path[len(home) + 1 :]
    return path


def count_files(path: str, limit: int = COUNT_LIMIT) -> int:
    """Files under ``path``, counting stops at ``limit``."""
    n = 0
    for _dirpath, _dirnames, filenames in os.walk(path):
        n += len(filenames)
        if n >= limit:
            return limit
    return n
