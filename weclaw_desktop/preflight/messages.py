"""The preflight's messages: the ``preflight.*`` entries of the one catalogue (weclaw_desktop/i18n).

They are printed before Qt starts; the language is the CLI's (set by ``cli.main`` from the terminal's locale).
"""

from __future__ import annotations

from weclaw_desktop import i18n


def language() -> str:
    return i18n.language()


def say(key: str, **values: str) -> str:
    return i18n.tr(f"preflight.{key}", **values)
