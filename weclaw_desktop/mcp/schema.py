"""Parameters of MCP tools: the server's JSON Schema, made safe to send and enforced on every call.

The registry and dispatcher work with pydantic models, so each server tool gets a small model built at
runtime: one field per property (any value; the name kept through an alias) and a check that runs the
server's *original* schema through ``jsonschema``, reporting each problem with its path, as pydantic
does for built-in tools. What the model is shown is the server's schema through the one schema pipeline
(``toolkit/schema.py``: references inlined or kept once under ``$defs``, recursion stopped with a
described open node, ``additionalProperties`` and free-form objects as the server wrote them, checked
against the 2020-12 metaschema). A root that allows more properties than it names
(``additionalProperties: true`` or a schema) gets a model that accepts them.
"""

from __future__ import annotations

import copy
import keyword
import logging
from typing import Any, ClassVar, cast

import jsonschema
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from weclaw_desktop.toolkit.schema import SchemaProblem, prepare

log = logging.getLogger("weclaw.mcp")

__all__ = ["McpOpenParams", "McpParams", "SchemaProblem", "params_model", "sanitize"]


def sanitize(schema: Any) -> dict[str, Any]:
    """What the model is shown for a server tool's input schema (raises :class:`SchemaProblem`)."""
    return prepare(schema if isinstance(schema, dict) else {}, close_objects=False)


def _open_root(schema: dict[str, Any]) -> bool:
    """Whether the server accepts arguments its schema does not name."""
    extra = schema.get("additionalProperties")
    return (extra is not None and extra is not False) or bool(schema.get("patternProperties"))


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

    @classmethod
    def weclaw_parameters(cls) -> dict[str, Any]:
        """The schema the one pipeline prepared from the server's (``toolkit.schema.openai_parameters``)."""
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
            if error.validator == "additionalProperties" and not error.absolute_path and not _open_root(cls.mcp_schema):
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


class McpOpenParams(McpParams):
    """Parameters of a server tool whose schema accepts more than the properties it names."""

    model_config = ConfigDict(extra="allow", populate_by_name=False)


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
    try:
        sanitized = sanitize(original)
    except SchemaProblem as exc:
        raise SchemaProblem(f"its input schema cannot be offered: {exc}") from None
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
    base: type[McpParams] = McpOpenParams if _open_root(original) else McpParams
    model = cast(type[McpParams], create_model(model_name, __base__=base, **fields))
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
