"""The words of an approval question, for the terminal and the dialog alike (no Qt here).

- :func:`why`: the reason it asks: "This chat read a web page (https://…); sending data out now needs
  your OK." — from the request's gated effects and untrusted sources (tools.json's ``source`` labels);
- :func:`origin`: where the request came from (the window, the command line, the phone, a schedule);
- :func:`shown_arguments`: every argument in full, with what could hide something made visible: control
  characters escaped, runs of spaces shown as ``⟨40 spaces⟩`` (a space-padded command cannot push its
  tail out of sight), nothing cut.
"""

from __future__ import annotations

import json
import re
from typing import Any

from weclaw_desktop.i18n import has, translate
from weclaw_desktop.toolkit.approval import ApprovalRequest
from weclaw_desktop.toolkit.manifest import Effect

#: Arguments shown as code (monospace, line by line): commands and programs.
CODE_ARGUMENTS = frozenset({"command", "code", "script", "content", "body", "html"})
_SPACES = re.compile(r"[ \t\u00a0\u2000-\u200b\u3000]{4,}")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200c-\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]")


def why(req: ApprovalRequest, lang: str) -> str:
    """Why this call asks: untrusted content came in (from tools.json's labels), or a hook's reason, or the
    risk (empty then: the risk line says it)."""
    if req.gated:
        source = next((s for s in reversed(req.sources) if not s.earlier), None) or (
            req.sources[-1] if req.sources else None
        )
        did = source.label.get(lang) if source is not None and source.label is not None else ""
        detail = translate(lang, "why.detail", detail=source.detail) if source is not None and source.detail else ""
        effect = req.gated[0]
        need = translate(
            lang,
            f"why.{effect.effect.value}",
            path=effect.detail,
            what=translate(lang, f"why.class.{effect.path_class}") if effect.path_class else "",
        )
        if effect.effect is Effect.READS_PRIVATE_DATA and not effect.path_class:
            need = translate(lang, "why.reads-private-data.any")
        return translate(
            lang, "why.after_untrusted", source=did or translate(lang, "why.unknown"), detail=detail, need=need
        )
    if req.reason:
        return translate(lang, "why.hook", reason=req.reason)
    return ""


def origin(req: ApprovalRequest, lang: str) -> str:
    key = f"origin.{req.origin.value}"
    return translate(lang, key) if has(key) else req.origin.value


def visible(text: str) -> str:
    """``text`` with control characters escaped and long runs of spaces counted (nothing hidden, nothing cut)."""
    text = _CONTROL.sub(
        lambda m: f"\\u{ord(m.group(0)):04x}" if ord(m.group(0)) > 0xFF else repr(m.group(0))[1:-1], text
    )
    return _SPACES.sub(lambda m: f"⟨{len(m.group(0))} spaces⟩", text)


def shown_arguments(arguments: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """(name, full value made visible, shown as code) for every argument, in order."""
    out: list[tuple[str, str, bool]] = []
    for name, value in arguments.items():
        if isinstance(value, str):
            out.append((name, visible(value), name in CODE_ARGUMENTS or "\n" in value))
        else:
            out.append(
                (
                    name,
                    visible(json.dumps(value, ensure_ascii=False, indent=2 if isinstance(value, dict) else None)),
                    False,
                )
            )
    return out


def arguments_text(arguments: dict[str, Any], indent: str = "    ") -> str:
    """The arguments as plain text lines (the terminal, the dialog's text box)."""
    lines: list[str] = []
    for name, value, code in shown_arguments(arguments):
        if code or "\n" in value:
            lines.append(f"{name}:")
            lines += [f"{indent}{line}" for line in value.split("\n")]
        else:
            lines.append(f"{name}: {value}")
    return "\n".join(lines)
