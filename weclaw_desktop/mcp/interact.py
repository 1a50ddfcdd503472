"""What a server may ask of the person and of the model, independent of any front end.

A server can ask the user for input (elicitation: a form generated from a small JSON Schema, or a URL to
open), ask the client's model for a completion (sampling), ask which folders it may work in (roots) and
send log messages. The protocol's requests become the plain requests here; a front end implements
:class:`UserAgent` (the GUI with dialogs, ``weclaw chat`` with terminal prompts) and the composition root
gives the manager a :class:`ClientHooks` with it, a :class:`Sampler` (the current provider) and the roots.

Without a user agent nothing is advertised: the server learns the client cannot elicit or sample, instead
of the client answering for a person who was never asked. Sampling always asks first and shows what the
server wants to send; a declined request is an error for the server, never a silent empty answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import jsonschema

Action = Literal["accept", "decline", "cancel"]
FieldKind = Literal["string", "number", "integer", "boolean", "choice", "choices"]


@dataclass(frozen=True)
class FormField:
    """One field of an elicitation form (the protocol allows flat primitive properties only)."""

    name: str
    kind: FieldKind
    title: str = ""
    description: str = ""
    required: bool = False
    default: Any = None
    choices: tuple[tuple[str, str], ...] = ()  # (value, label) for choice / choices
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: str = ""  # email, uri, date, date-time

    @property
    def label(self) -> str:
        return self.title or self.name


@dataclass(frozen=True)
class FormRequest:
    server: str
    message: str
    fields: tuple[FormField, ...]
    schema: Mapping[str, Any]  # the requested schema, for validation

    def problems(self, content: Mapping[str, Any]) -> list[str]:
        """What is wrong with ``content`` for this form (empty: it can be sent)."""
        validator = jsonschema.Draft202012Validator(dict(self.schema), format_checker=jsonschema.FormatChecker())
        out = []
        for error in sorted(validator.iter_errors(dict(content)), key=lambda e: [str(p) for p in e.absolute_path]):
            where = ".".join(str(p) for p in error.absolute_path)
            out.append(f"{where}: {error.message}" if where else error.message)
        return out


@dataclass(frozen=True)
class UrlRequest:
    server: str
    message: str
    url: str


@dataclass(frozen=True)
class ElicitAnswer:
    action: Action
    content: dict[str, Any] | None = None


@dataclass(frozen=True)
class SamplingRequest:
    server: str
    messages: tuple[tuple[str, str], ...]  # (role, text); non-text parts are described in the text
    system_prompt: str = ""
    max_tokens: int = 1024
    temperature: float | None = None
    model_hints: tuple[str, ...] = ()
    stop: tuple[str, ...] = ()


@dataclass(frozen=True)
class SamplingAnswer:
    text: str
    model: str
    stop_reason: str = "endTurn"


class UserAgent(Protocol):
    """The person at the client, as a front end reaches them."""

    async def elicit(self, request: FormRequest | UrlRequest) -> ElicitAnswer: ...

    async def approve_sampling(self, request: SamplingRequest) -> bool: ...


class Sampler(Protocol):
    """The model of the client (the provider the user configured)."""

    async def sample(self, request: SamplingRequest) -> SamplingAnswer: ...


@dataclass
class ClientHooks:
    """What the client offers servers; each part left None is not advertised."""

    user: UserAgent | None = None
    sampler: Sampler | None = None
    roots: Callable[[], Sequence[Path]] | None = None
    on_log: Callable[[str, str, Any], None] | None = None  # (server, level, data), besides the log file
    open_url: Callable[[str], Awaitable[None]] | None = None  # a sign-in page (default: the browser)
    notes: list[str] = field(default_factory=list)


def form_fields(schema: Mapping[str, Any]) -> tuple[FormField, ...]:
    """The fields of a requested schema, in its order; unknown shapes become plain text fields."""
    found = schema.get("properties")
    props: dict[str, Any] = found if isinstance(found, dict) else {}
    required = set(schema.get("required") or [])
    out: list[FormField] = []
    for name, prop in props.items():
        if not isinstance(prop, dict):
            prop = {}
        kind: FieldKind
        choices: tuple[tuple[str, str], ...] = ()
        raw_items = prop.get("items")
        items: dict[str, Any] = raw_items if isinstance(raw_items, dict) else {}
        if prop.get("type") == "array":
            kind = "choices"
            choices = _choices(items)
        elif "enum" in prop or "oneOf" in prop:
            kind = "choice"
            choices = _choices(prop)
        elif prop.get("type") in ("number", "integer", "boolean"):
            kind = prop["type"]
        else:
            kind = "string"
        out.append(
            FormField(
                name=str(name),
                kind=kind,
                title=str(prop.get("title") or ""),
                description=str(prop.get("description") or ""),
                required=name in required,
                default=prop.get("default"),
                choices=choices,
                minimum=prop.get("minimum"),
                maximum=prop.get("maximum"),
                min_length=prop.get("minLength"),
                max_length=prop.get("maxLength"),
                format=str(prop.get("format") or ""),
            )
        )
    return tuple(out)


def _choices(node: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    if isinstance(node.get("oneOf") or node.get("anyOf"), list):
        opts = node.get("oneOf") or node.get("anyOf") or []
        return tuple((str(o.get("const")), str(o.get("title") or o.get("const"))) for o in opts if isinstance(o, dict))
    values = [str(v) for v in node.get("enum") or []]
    given = node.get("enumNames")
    names: list[Any] = given if isinstance(given, list) else values
    return tuple(zip(values, [str(n) for n in names], strict=False))
