"""One translation system for every text a person reads: the Qt windows and dialogs, the tool panel's
diagnostics, and the CLI's messages. No Qt here: the CLI uses it with no display.

    from weclaw_desktop.i18n import tr, Text
    tr("settings.models_fetched", n=3)       # "3 models found" / "找到 3 个模型"
    label = Text("chat.stopped")              # rendered when shown: str(label) follows the language

Why a keyed catalogue in TOML files (``resources/i18n/<lang>.toml``, see :mod:`.catalogue`) and not
gettext or Qt's .ts/.qm: the CLI must work without Qt, so Qt's translator cannot be the source; gettext
needs a compile step (.po -> .mo, Babel or msgfmt) in the build and the bundle, and keys its entries by
the English text, so fixing an English typo silently drops every translation of it. Here a key is stable,
the two languages are plain files a translator edits side by side, nothing is compiled (the files are
bundled with ``resources/`` like the icons), and plurals follow CLDR categories per language. Qt's own
dialogs (file picker, message box buttons) still use Qt's translations (``qtbase_zh_CN.qm``): the Qt layer
installs them when the language changes (``ui/translation.py``).

The active language is process-wide. :func:`set_language` changes it and tells the subscribers
(:func:`subscribe`); the Qt layer turns that into a ``LanguageChange`` for every open window, and widgets
retranslate themselves. A missing key is a bug: it is shown as the key itself (and a test checks every key
the code uses exists in every catalogue).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from weclaw_desktop.i18n.catalogue import catalogue, is_plural, plural_category
from weclaw_desktop.i18n.language import (
    FALLBACK,
    LANGUAGES,
    first_supported,
    has_chinese,
    is_chinese,
    language_of,
    system_languages,
)

__all__ = [
    "FALLBACK",
    "LANGUAGES",
    "Text",
    "has",
    "has_chinese",
    "is_chinese",
    "language",
    "language_of",
    "pick",
    "resolve_language",
    "set_language",
    "subscribe",
    "system_languages",
    "tr",
    "translate",
]

log = logging.getLogger("weclaw.i18n")

_state = {"lang": FALLBACK}
_listeners: list[Callable[[str], None]] = []


def language() -> str:
    """The active UI language: ``"en"`` or ``"zh"``."""
    return _state["lang"]


def set_language(lang: str) -> bool:
    """Make ``lang`` (a language or locale tag) the active language; True if it changed. Subscribers are
    told after the change (the Qt layer retranslates every open window)."""
    new = language_of(lang) or FALLBACK
    if new == _state["lang"]:
        return False
    _state["lang"] = new
    for listener in list(_listeners):
        try:
            listener(new)
        except Exception:  # one broken listener must not keep the others in the old language
            log.exception("language listener failed")
    return True


def subscribe(listener: Callable[[str], None]) -> Callable[[], None]:
    """Call ``listener(lang)`` after every language change; returns the function that unsubscribes."""
    _listeners.append(listener)

    def unsubscribe() -> None:
        if listener in _listeners:
            _listeners.remove(listener)

    return unsubscribe


def resolve_language(setting: str, preferred: list[str] | None = None) -> str:
    """The UI language for a settings value: ``"en"``/``"zh"`` as set; ``"system"`` picks the first of the
    user's preferred languages WeClaw has (``preferred``: Qt's list in the GUI; else the environment's)."""
    explicit = language_of(setting) if setting != "system" else None
    if explicit is not None:
        return explicit
    return first_supported(preferred if preferred is not None else system_languages())


def has(key: str) -> bool:
    return key in catalogue(FALLBACK)


def translate(lang: str, key: str, /, **args: Any) -> str:
    """``key`` in ``lang`` (e.g. English for the log and the model, whatever the UI shows)."""
    entry = catalogue(lang).get(key)
    if entry is None and lang != FALLBACK:
        entry = catalogue(FALLBACK).get(key)
    if entry is None:
        log.warning("no text for %r", key)
        return key
    if is_plural(entry):
        assert isinstance(entry, Mapping)
        n = args.get("n", 0)
        number = n if isinstance(n, (int, float)) else 0
        template = entry.get(plural_category(lang, number)) or entry["other"]
    else:
        template = str(entry)
    if not args:
        return template
    try:
        return template.format(**args)
    except (KeyError, IndexError, ValueError):
        log.exception("text %r (%s) does not fit its arguments %s", key, lang, sorted(args))
        return template


def tr(key: str, /, **args: Any) -> str:
    """``key`` in the active language, filled with ``args`` (``n`` picks the plural form)."""
    return translate(_state["lang"], key, **args)


class Text:
    """A message rendered when it is shown, so a language switch can render it again.

    ``args`` may hold other :class:`Text` values (rendered in the same language)."""

    __slots__ = ("args", "key")

    def __init__(self, key: str, /, **args: Any) -> None:
        self.key = key
        self.args: dict[str, Any] = args

    def render(self, lang: str | None = None) -> str:
        lang = lang or _state["lang"]
        args = {k: v.render(lang) if isinstance(v, Text) else v for k, v in self.args.items()}
        return translate(lang, self.key, **args)

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        return f"Text({self.key!r}, **{self.args!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Text) and (self.key, self.args) == (other.key, other.args)

    __hash__ = None  # type: ignore[assignment]


def pick(texts: Mapping[str, str] | object) -> str:
    """The active language's entry of a ``{"en": ..., "zh": ...}`` mapping or a LocalizedText."""
    lang = _state["lang"]
    if isinstance(texts, Mapping):
        return str(texts.get(lang) or texts.get(FALLBACK) or "")
    get = getattr(texts, "get", None)
    if get is None:
        return str(texts)
    return str(get(lang))
