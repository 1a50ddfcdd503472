"""Parameters of MCP tools: the server's JSON Schema, made safe to send and enforced on every call.

The registry and dispatcher work with pydantic models, so each server tool gets a small model built at
runtime: one field per property (any value; the name kept through an alias) and a check that runs the
server's *original* schema through ``jsonschema``, reporting each problem with its path, as pydantic
does for built-in tools. What the model is shown is a sanitised copy of that schema: references
inlined, no ``$schema``/``$id``/titles, and closed objects (``additionalProperties: false``).
"""

from __future__ import annotations

import copy
import keyword
import logging
from typing import Any, ClassVar

import jsonschema
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

log = logging.getLogger("weclaw.mcp")

_DROP = {"$schema", "$id", "$comment", "$defs", "definitions", "$anchor", "$dynamicAnchor"}
_MAX_DEPTH = 24


class SchemaProblem(ValueError):
    """The server sent an input schema that cannot be used."""


def sanitize(schema: Any) -> dict[str, Any]:
    """A copy of ``schema`` an OpenAI-compatible endpoint accepts: refs inlined, closed objects."""
    if not isinstance(schema, dict):
        schema = {}
    root = copy.deepcopy(schema)
    out = _clean(root, root, depth=0)
    if not isinstance(out, dict):
        out = {}
    if out.get("type") != "object":
        out = {"type": "object", "properties": {}} if "properties" not in out else {**out, "type": "object"}
    out.setdefault("properties", {})
    out["additionalProperties"] = False  # the dispatcher refuses unknown arguments anyway
    return out


def _resolve(ref: str, root: dict[str, Any]) -> Any:
    if not ref.startswith("#"):
        return {}  # a remote reference: never fetched; leave the value unconstrained
    node: Any = root
    for part in [p for p in ref[1:].split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return {}
    return copy.deepcopy(node)


def _clean(node: Any, root: dict[str, Any], depth: int) -> Any:
    if depth > _MAX_DEPTH:
        return {}  # a recursive schema: deeper levels are not described (still validated on call)
    if isinstance(node, list):
        return [_clean(item, root, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    if isinstance(node.get("$ref"), str):
        target = _resolve(node["$ref"], root)
        merged = {**(target if isinstance(target, dict) else {}), **{k: v for k, v in node.items() if k != "$ref"}}
        return _clean(merged, root, depth + 1)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROP or (key == "title" and not isinstance(value, dict)):
            continue
        if key in ("properties", "patternProperties") and isinstance(value, dict):
            out[key] = {name: _clean(sub, root, depth + 1) for name, sub in value.items()}
        else:
            out[key] = _clean(value, root, depth + 1)
    if (out.get("type") == "object" or "properties" in out) and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


class McpParams(BaseModel):
    """Base of the generated parameter models. Subclasses carry the schemas as class variables."""

    model_config = ConfigDict(extra="forbid", populate_by_name=False)

    mcp_schema: ClassVar[dict[str, Any]] = {}
    mcp_sanitized: ClassVar[dict[str, Any]] = {}
    mcp_validator: ClassVar[Any] = None

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The sanitised server schema (what the model is shown), not pydantic's view of the fields."""
        return copy.deepcopy(cls.mcp_sanitized)

    @model_validator(mode="before")
    @classmethod
    def _check_schema(cls, data: Any) -> Any:
        validator = cls.mcp_validator
        if validator is None or not isinstance(data, dict):
            return data
        known = set(cls.mcp_sanitized.get("properties", {}))
        details: list[InitErrorDetails] = []
        for key in data:
            if key not in known and key in cls.model_fields:  # an internal field name, not the server's
                details.append(_detail((), f"unknown argument '{key}'", data))
        for error in sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path]):
            if error.validator == "additionalProperties" and not error.absolute_path:
                continue  # the dispatcher names unknown arguments itself
            if error.validator == "required" and not error.absolute_path:
                missing = [p for p in error.validator_value if p not in data and p in known]
                if missing:
                    for name in missing:
                        details.append(_detail((name,), "Field required", data))
                    continue
            loc = tuple(str(p) for p in error.absolute_path)
            details.append(_detail(loc, error.message, data))
        if details:
            raise ValidationError.from_exception_data(cls.__name__, details)
        return data

    def arguments(self) -> dict[str, Any]:
        """The arguments to send: what the model gave, under the server's own property names."""
        return self.model_dump(by_alias=True, exclude_unset=True)


def _detail(loc: tuple[str, ...], message: str, data: Any) -> InitErrorDetails:
    return InitErrorDetails(
        type=PydanticCustomError("mcp_schema", "{message}", {"message": message}), loc=loc, input=data
    )


def params_model(model_name: str, schema: Any) -> type[McpParams]:
    """A pydantic model for one server tool whose validation is the server's ``schema``.

    Raises :class:`SchemaProblem` when the schema itself is not valid JSON Schema.
    """
    original = schema if isinstance(schema, dict) else {"type": "object"}
    cls = jsonschema.validators.validator_for(original, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(original)
    except SchemaError as exc:
        raise SchemaProblem(f"its input schema is not valid JSON Schema: {exc.message}") from None
    sanitized = sanitize(original)
    fields: dict[str, Any] = {}
    required = set(sanitized.get("required", []))
    for index, prop in enumerate(sanitized["properties"]):
        fname = prop if _usable_field_name(prop) else f"field_{index}"
        description = (
            sanitized["properties"][prop].get("description")
            if isinstance(sanitized["properties"][prop], dict)
            else None
        )
        default: Any = ... if prop in required else None
        fields[fname] = (Any, Field(default, alias=prop, description=description))
    model: type[McpParams] = create_model(model_name, __base__=McpParams, **fields)
    model.mcp_schema = original
    model.mcp_sanitized = sanitized
    model.mcp_validator = cls(original, format_checker=cls.FORMAT_CHECKER)
    return model


def _usable_field_name(name: str) -> bool:
    return (
        name.isidentifier()
        and not keyword.iskeyword(name)
        and not name.startswith("_")
        and not name.startswith("model_")
        and not hasattr(McpParams, name)
    )
