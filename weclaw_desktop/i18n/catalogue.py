"""The message catalogues: ``resources/i18n/<lang>.toml``, one per UI language, read by the GUI and the CLI.

A catalogue maps keys (``section.name``: a TOML table per section) to a template, or, for text that
depends on a number, to its plural forms by CLDR category::

    [settings]
    models_fetched = { one = "{n} model found", other = "{n} models found" }   # en
    models_fetched = { other = "找到 {n} 个模型" }                               # zh

Templates are ``str.format`` strings filled with keyword arguments. A plural entry is chosen by the
argument ``n``. Which categories a language has is data (:data:`PLURAL_RULES`, after CLDR); a test checks
every catalogue against the English one (same keys, same placeholders, the categories its language needs).
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from functools import cache

from weclaw_desktop.paths import resource_path

#: CLDR plural categories.
CATEGORIES = ("zero", "one", "two", "few", "many", "other")

Entry = str | Mapping[str, str]


def _english(n: float) -> str:
    return "one" if n == 1 and float(n).is_integer() else "other"


def _no_plural(n: float) -> str:
    return "other"


#: language -> (the categories its catalogue must give, the rule choosing one for a number). CLDR:
#: English "1 file" / "2 files", "1.0 files"; Chinese has no plural forms (a measure word, no inflection).
PLURAL_RULES: dict[str, tuple[tuple[str, ...], Callable[[float], str]]] = {
    "en": (("one", "other"), _english),
    "zh": (("other",), _no_plural),
}


class CatalogueError(ValueError):
    """A catalogue file is missing or malformed (a packaging bug: the app cannot show its text)."""


def is_plural(entry: object) -> bool:
    return isinstance(entry, Mapping) and "other" in entry and set(entry) <= set(CATEGORIES)


def _flatten(table: Mapping[str, object], prefix: str, out: dict[str, Entry], source: str) -> None:
    for name, value in table.items():
        key = f"{prefix}{name}"
        if isinstance(value, str) or is_plural(value):
            out[key] = value  # type: ignore[assignment]
        elif isinstance(value, Mapping):
            _flatten(value, key + ".", out, source)
        else:
            raise CatalogueError(f"{source}: {key} must be a string or plural forms, not {type(value).__name__}")


@cache
def catalogue(lang: str) -> Mapping[str, Entry]:
    """The flat key -> entry table of one language (read once)."""
    path = resource_path("i18n", f"{lang}.toml")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise CatalogueError(f"cannot read the {lang} catalogue {path}: {exc}") from exc
    out: dict[str, Entry] = {}
    _flatten(data, "", out, path.name)
    return out


def plural_category(lang: str, n: float) -> str:
    rule = PLURAL_RULES.get(lang, PLURAL_RULES["en"])[1]
    return rule(n)
