"""The one schema pipeline: what a model is shown for a function's parameters, built-in or MCP.

Every tool's parameters pass through :func:`prepare` before they are sent: a built-in tool's pydantic model
(:func:`openai_parameters`) and an MCP server's JSON Schema (``mcp/schema.py``). The result is

- small and self-contained: ``$ref`` is inlined (titles, ``$schema``, ``$id``, ``$comment`` dropped); a
  reference back into itself (a tree, a linked list, ``{"$ref": "#"}``) stops at the first repeat with a
  *described open* node (same type, a description saying the structure repeats), so recursion never
  unrolls; when inlining would make a schema large (shared definitions used many times), the definitions
  are kept once under ``$defs`` instead and referred to;
- faithful: ``additionalProperties`` (true, false or a schema) and free-form objects are kept as written;
  only built-in models (``close_objects=True``) get ``additionalProperties: false`` on every object, as
  pydantic's ``extra="forbid"`` means; older drafts' forms are rewritten to 2020-12 (tuple ``items`` to
  ``prefixItems``, boolean ``exclusiveMaximum``, ``definitions``);
- valid: checked against the JSON Schema Draft 2020-12 metaschema, every reference resolvable, and at most
  :data:`MAX_CHARS` long. A schema that cannot be made so raises :class:`SchemaProblem`; the caller hides
  that one function with a ``schema-invalid`` diagnostic instead of sending a request the endpoint rejects.

Keywords are walked by what they hold (a schema, a list or a map of schemas); values such as ``default``,
``enum`` and ``examples`` are data and are copied untouched, so a property called ``title`` or ``$ref``
survives.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel

#: What every prepared schema is checked against.
DIALECT = Draft202012Validator
#: Past this many characters an inlined schema keeps shared definitions once under ``$defs``.
INLINE_BUDGET = 8_000
#: A schema still longer than this is not sent (it would cost more of the context than it is worth).
MAX_CHARS = 24_000

_DROP = frozenset({"$schema", "$id", "id", "$comment", "$anchor", "$dynamicAnchor", "$vocabulary"})
_DEFS = frozenset({"$defs", "definitions"})
_ONE = frozenset(
    {
        "additionalProperties",
        "additionalItems",
        "items",
        "contains",
        "not",
        "if",
        "then",
        "else",
        "propertyNames",
        "unevaluatedProperties",
        "unevaluatedItems",
        "contentSchema",
    }
)
_LIST = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_MAP = frozenset({"properties", "patternProperties", "dependentSchemas"})
_REFS = ("$ref", "$dynamicRef", "$recursiveRef")


class SchemaProblem(ValueError):
    """A parameters schema that cannot be sent to a model; the message says why."""


def openai_parameters(model: type[BaseModel]) -> dict[str, Any]:
    """A built-in action's parameters: its pydantic model through :func:`prepare`, every object closed.

    A model built from someone else's JSON Schema (an MCP server's) has that schema prepared already, as
    written (``close_objects=False``); it hands it over through a ``weclaw_parameters()`` classmethod, so
    its free-form objects are not closed a second time here."""
    own = getattr(model, "weclaw_parameters", None)
    if callable(own):
        prepared = own()
        check(prepared)
        return dict(prepared)
    return prepare(model.model_json_schema(mode="validation"), close_objects=True)


def prepare(raw: Any, *, close_objects: bool = False) -> dict[str, Any]:
    """The schema a model is shown for ``raw`` (see the module docstring); raises :class:`SchemaProblem`."""
    root: dict[str, Any] = raw if isinstance(raw, dict) else {}
    walker = _Walker(root, close_objects, inline=True)
    try:
        out = walker.top()
    except _TooBig:
        out = None
    if out is None or (walker.refs_used and _size(out) > INLINE_BUDGET):
        out = _Walker(root, close_objects, inline=False).top()
    check(out)
    return out


def check(schema: dict[str, Any]) -> None:
    """Raise :class:`SchemaProblem` unless ``schema`` is a valid 2020-12 object schema we can send."""
    try:
        DIALECT.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "the top level"
        raise SchemaProblem(f"not valid JSON Schema at {where}: {exc.message}") from None
    if schema.get("type") != "object":
        raise SchemaProblem("the parameters must be an object")
    defs = schema.get("$defs", {})
    for ref in _refs_in(schema):
        if ref != "#" and not (ref.startswith("#/$defs/") and ref[len("#/$defs/") :] in defs):
            raise SchemaProblem(f"the reference {ref} does not resolve")
    size = _size(schema)
    if size > MAX_CHARS:
        raise SchemaProblem(f"it is too large to send ({size:,} characters; the limit is {MAX_CHARS:,})")


def _size(schema: Any) -> int:
    return len(json.dumps(schema, ensure_ascii=False, separators=(",", ":")))


def _refs_in(node: Any) -> list[str]:
    found: list[str] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str):
                found.append(ref)
            stack.extend(v for k, v in item.items() if k not in ("enum", "const", "default", "examples"))
        elif isinstance(item, list):
            stack.extend(item)
    return found


class _TooBig(Exception):
    """Inlining grows past :data:`INLINE_NODES` nodes (definitions shared many times over)."""


#: An inlining pass stops past this many schema nodes and keeps definitions under ``$defs`` instead.
INLINE_NODES = 4_000


class _Walker:
    """One pass over a schema: inline references (``inline``) or collect them under ``$defs``."""

    def __init__(self, root: dict[str, Any], close_objects: bool, *, inline: bool) -> None:
        self.root = root
        self.close_objects = close_objects
        self.inline = inline
        self.refs_used = False
        self.names: dict[str, str] = {}  # reference -> its name under $defs (collecting mode)
        self.defs: dict[str, Any] = {}
        self.nodes = 0

    def top(self) -> dict[str, Any]:
        out = self.schema(self.root, ("#",))  # a reference back to the root is a repeat at once
        if not isinstance(out, dict):
            out = {}
        if self.close_objects:  # a pydantic model: always an object (key order as pydantic gives it)
            out.setdefault("type", "object")
            out.setdefault("properties", {})
        else:
            if out.get("type") != "object":
                out["type"] = "object"
            out.setdefault("properties", {})
            # the dispatcher refuses arguments the schema does not name unless the server allows more
            out.setdefault("additionalProperties", False)
        if not self.inline:
            done: set[str] = set()
            while pending := [r for r in self.names if r not in done]:
                for ref in pending:
                    done.add(ref)
                    target = self.resolve(ref)
                    self.defs[self.names[ref]] = self.schema(target if target is not None else {}, ())
            if self.defs:
                out["$defs"] = self.defs
        return out

    # --- references -----------------------------------------------------------------------------
    def resolve(self, ref: str) -> Any:
        """The local target of ``ref`` (a JSON pointer into the root), or None (remote, missing)."""
        if not ref.startswith("#"):
            return None
        node: Any = self.root
        for part in [p for p in ref[1:].split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
        return node

    def _reference(self, node: dict[str, Any], stack: tuple[str, ...]) -> Any:
        key = next(k for k in _REFS if isinstance(node.get(k), str))
        ref = str(node[key])
        if key != "$ref" and not ref.startswith("#/"):
            ref = "#"  # $recursiveRef / $dynamicRef "#" (or "#meta"): the document root in practice
        siblings = {k: v for k, v in node.items() if k not in _REFS}
        target = self.resolve(ref)
        self.refs_used = True
        if target is None or isinstance(target, bool):
            return self._open(siblings, f"described elsewhere ({ref}), so any value is accepted here", stack)
        if not isinstance(target, dict):
            return self._open(siblings, f"the reference {ref} is not a schema", stack)
        if self.inline:
            if ref in stack:
                return self._stop(ref, target, siblings)
            return self.schema({**target, **siblings}, (*stack, ref))
        if ref == "#":
            out: dict[str, Any] = {"$ref": "#"}
        else:
            name = self.names.get(ref)
            if name is None:
                name = self.names[ref] = self._def_name(ref)
            out = {"$ref": f"#/$defs/{name}"}
        out.update(self._walk_keys(siblings, stack))
        return out

    def _def_name(self, ref: str) -> str:
        base = ref.rsplit("/", 1)[-1] if ref.startswith(("#/$defs/", "#/definitions/")) else "ref"
        base = "".join(c if c.isalnum() or c in "_-" else "_" for c in base) or "ref"
        taken = set(self.names.values())
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}_{n}"
        return name

    def _stop(self, ref: str, target: dict[str, Any], siblings: dict[str, Any]) -> dict[str, Any]:
        """Where a structure refers back into itself: a described open node instead of unrolling."""
        kind = target.get("type")
        label = "the whole arguments object" if ref == "#" else f"'{ref.rsplit('/', 1)[-1]}'"
        about = str(siblings.get("description") or target.get("description") or "").strip()
        text = f"{about} " if about else ""
        text += f"(recursive: the same structure as {label}; its inner levels are not spelled out here)"
        out: dict[str, Any] = {"type": kind} if isinstance(kind, str) else {}
        out["description"] = text
        return out

    def _open(self, siblings: dict[str, Any], why: str, stack: tuple[str, ...]) -> dict[str, Any]:
        out = self._walk_keys(siblings, stack)
        about = str(out.get("description") or "").strip()
        out["description"] = f"{about} ({why})" if about else why.capitalize()
        return out

    # --- schemas --------------------------------------------------------------------------------
    def schema(self, node: Any, stack: tuple[str, ...]) -> Any:
        if not isinstance(node, dict):
            return copy.deepcopy(node)  # true / false are schemas; anything else is caught by check()
        self.nodes += 1
        if self.inline and self.nodes > INLINE_NODES:
            raise _TooBig
        if any(isinstance(node.get(k), str) for k in _REFS):
            return self._reference(node, stack)
        out = self._walk_keys(node, stack)
        _to_2020_12(out)
        if self.close_objects and out.get("type") == "object" and "additionalProperties" not in out:
            out["additionalProperties"] = False
        return out

    def _walk_keys(self, node: dict[str, Any], stack: tuple[str, ...]) -> dict[str, Any]:
        walk: Callable[[Any], Any] = lambda sub: self.schema(sub, stack)  # noqa: E731
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DROP or key in _DEFS or (key == "title" and not isinstance(value, dict)):
                continue
            if key in _MAP and isinstance(value, dict):
                out[key] = {name: walk(sub) for name, sub in value.items()}
            elif key in _LIST and isinstance(value, list):
                out[key] = [walk(sub) for sub in value]
            elif key in _ONE:
                out[key] = [walk(sub) for sub in value] if isinstance(value, list) else walk(value)
            elif key == "dependencies" and isinstance(value, dict):
                out[key] = {k: walk(v) if isinstance(v, dict | bool) else copy.deepcopy(v) for k, v in value.items()}
            else:
                out[key] = copy.deepcopy(value)  # data (default, enum, examples, required, ...) or a plain value
        return out


def _to_2020_12(out: dict[str, Any]) -> None:
    """Rewrite older drafts' forms in place: tuple ``items``, boolean exclusive bounds."""
    if isinstance(out.get("items"), list):
        out["prefixItems"] = out.pop("items")
        if "additionalItems" in out:
            out["items"] = out.pop("additionalItems")
    else:
        out.pop("additionalItems", None)  # meaningless without tuple items
    for bound, exclusive in (("maximum", "exclusiveMaximum"), ("minimum", "exclusiveMinimum")):
        flag = out.get(exclusive)
        if isinstance(flag, bool):
            del out[exclusive]
            if flag and bound in out:
                out[exclusive] = out.pop(bound)
