"""Which language is this? The one place that answers it, for language tags and for text.

- :func:`language_of` maps any locale or language tag (``zh``, ``zh_CN.UTF-8``, ``zh-Hans-CN``, ``zh_TW``,
  Windows' ``Chinese (Simplified)_China``, ``en-US``, ``C``) to a supported UI language or ``None``;
  :func:`is_chinese` is ``language_of(tag) == "zh"``.
- :func:`has_chinese` says whether a text is written (partly) in Chinese characters.
- :func:`system_languages` lists the user's preferred languages without Qt (environment, locale, and on
  Windows the user's UI language), for the CLI; the GUI passes Qt's ``QLocale.uiLanguages()`` instead.
"""

from __future__ import annotations

import contextlib
import locale
import os
import re
import sys
from collections.abc import Iterable

#: The UI languages WeClaw ships catalogues for, the fallback first.
LANGUAGES = ("en", "zh")
FALLBACK = "en"

#: Han ideographs (CJK Unified Ideographs, Extension A, Compatibility Ideographs).
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
#: Language names some platforms put in locale strings instead of ISO codes (Windows' getlocale()).
_NAMES = {"chinese": "zh", "english": "en"}
_SPLIT = re.compile(r"[-_.@ (]")


def language_of(tag: str | None) -> str | None:
    """The supported UI language a locale/language tag names, or None (unsupported, empty, ``C``)."""
    if not tag:
        return None
    head = _SPLIT.split(tag.strip().lower(), maxsplit=1)[0]
    head = _NAMES.get(head, head)
    return head if head in LANGUAGES else None


def is_chinese(tag: str | None) -> bool:
    """Whether a locale or language tag is Chinese (any script or region)."""
    return language_of(tag) == "zh"


def has_chinese(text: str) -> bool:
    """Whether ``text`` contains Chinese characters."""
    return _HAN.search(text) is not None


def first_supported(tags: Iterable[str | None], default: str = FALLBACK) -> str:
    """The first of the user's preferred languages that WeClaw has; else ``default``."""
    for tag in tags:
        lang = language_of(tag)
        if lang is not None:
            return lang
    return default


def system_languages() -> list[str]:
    """The user's preferred languages as the environment and the OS say, best first (no Qt needed)."""
    tags: list[str] = []
    language_env = os.environ.get("LANGUAGE", "")  # GNU: a colon-separated preference list
    tags += [t for t in language_env.split(":") if t]
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(name)
        if value:
            tags.append(value)
            break  # the first one set is the one in effect
    if sys.platform == "win32":
        tags.append(_windows_ui_language())
    with contextlib.suppress(ValueError):  # an unknown locale name in the environment
        tags.append(locale.getlocale()[0] or "")
    return [t for t in tags if t and t.upper() not in ("C", "POSIX")]


def _windows_ui_language() -> str:  # pragma: no cover - Windows only
    """The Windows display language ("zh_CN"), which the environment does not carry."""
    try:
        import ctypes

        lcid = ctypes.windll.kernel32.GetUserDefaultUILanguage()  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return ""
    return str(locale.windows_locale.get(int(lcid), ""))
