"""Why a tool is hidden: a stable code plus a human message and what to do about it.

The message and the hint are text for people (the tool panel, ``weclaw tools``) and, in English, for the
log and the model. :meth:`Diagnostic.of` takes them from the message catalogue (``diag.text.<key>`` and
``diag.hint.<key>``), so there is one English text and its translations; :func:`human_text` renders a
diagnostic in the UI language at the moment it is shown. A diagnostic made from free text (an MCP
server's own status line) keeps it, led by the translated meaning of its code.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from weclaw_desktop import i18n


class Code(StrEnum):
    """Stable diagnostic codes. The tool panel, ``weclaw tools`` and the logs use them."""

    BRIDGE_MISSING = "bridge-missing"
    CONFIG_MISSING = "config-missing"
    AUTH_MISSING = "auth-missing"
    ENV_MISSING = "env-missing"
    DEPENDENCY_MISSING = "dependency-missing"
    PLATFORM_UNSUPPORTED = "platform-unsupported"
    DISABLED_BY_POLICY = "disabled-by-policy"
    DISABLED_BY_USER = "disabled-by-user"
    DISABLED_SETTINGS_UNREADABLE = (
        "disabled-settings-unreadable"  # off until the user's settings can be read (fail closed)
    )
    DISABLED_IN_MANIFEST = "disabled-in-manifest"
    DISABLED_BY_ASSISTANT = "disabled-by-assistant"  # not among the tools of the chat's assistant
    CIRCUIT_OPEN = "circuit-open"
    LOAD_FAILED = "load-failed"
    SERVER_UNAVAILABLE = "server-unavailable"
    SCHEMA_INVALID = "schema-invalid"


class Diagnostic(BaseModel):
    model_config = ConfigDict(frozen=True)

    code: Code
    message: str  # English (the log, the model, --json)
    hint: str = ""
    text_key: str = ""  # the catalogue's diag.text.<key> that ``message`` was made from
    hint_key: str = ""  # ... and diag.hint.<key> for ``hint``
    args: tuple[tuple[str, str], ...] = ()  # the values filled into both

    @classmethod
    def of(cls, code: Code, text_key: str, hint_key: str = "", /, **args: Any) -> Diagnostic:
        """A diagnostic whose message (and hint) are catalogue entries filled with ``args``."""
        values = {k: str(v) for k, v in args.items()}
        return cls(
            code=code,
            message=i18n.translate("en", f"diag.text.{text_key}", **values),
            hint=i18n.translate("en", f"diag.hint.{hint_key}", **values) if hint_key else "",
            text_key=text_key,
            hint_key=hint_key,
            args=tuple(sorted(values.items())),
        )

    def __str__(self) -> str:
        text = f"[{self.code.value}] {self.message.rstrip('.')}."
        return f"{text} {self.hint}" if self.hint else text


def human_text(d: Diagnostic, lang: str | None = None) -> tuple[str, str]:
    """(why, what to do) in ``lang`` (default: the UI language)."""
    lang = lang or i18n.language()
    args = dict(d.args)
    if d.text_key:
        why = i18n.translate(lang, f"diag.text.{d.text_key}", **args)
    elif lang == i18n.FALLBACK:
        why = d.message
    else:  # free English text: the code's meaning in the UI language leads it
        why = f"{i18n.translate(lang, f'diag.{d.code.value}')}（{d.message}）"
    if d.hint_key:
        hint = i18n.translate(lang, f"diag.hint.{d.hint_key}", **args)
    elif d.hint and lang == i18n.FALLBACK:
        hint = d.hint
    else:
        hint = i18n.translate(lang, f"diag.{d.code.value}.hint")
    return why, hint
