"""Turn a pydantic parameters model into the JSON Schema an OpenAI-compatible endpoint accepts.

Endpoints differ in how much JSON Schema they understand; the safe subset is a closed object with
inline definitions. So: ``$ref`` is inlined, ``title`` is dropped (it repeats the key and costs tokens),
and every object gets ``additionalProperties: false``.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel

_DROP = {"title"}


def openai_parameters(model: type[BaseModel]) -> dict[str, Any]:
    raw = model.model_json_schema(mode="validation")
    defs: dict[str, Any] = raw.pop("$defs", {})
    schema = _inline(raw, defs, depth=0)
    if not isinstance(schema, dict):  # pragma: no cover - pydantic always returns a dict here
        raise TypeError("parameters schema must be an object")
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


def _inline(node: Any, defs: dict[str, Any], depth: int) -> Any:
    if depth > 32:
        raise ValueError("parameters schema nests too deeply (recursive model?)")
    if isinstance(node, list):
        return [_inline(item, defs, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        target = copy.deepcopy(defs[name])
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _inline(merged, defs, depth + 1)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROP and not isinstance(value, dict):
            continue
        if key in ("properties", "$defs", "patternProperties"):
            out[key] = {name: _inline(sub, defs, depth + 1) for name, sub in value.items()}
        else:
            out[key] = _inline(value, defs, depth + 1)
    if out.get("type") == "object" and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out
