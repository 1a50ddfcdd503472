"""The one schema pipeline (toolkit/schema.py): every schema sent to a model is valid 2020-12 JSON Schema,
small, and faithful; built-in schemas that were already valid are byte-identical to what they were; a
schema that cannot be made valid hides that one function, never the turn."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import pytest
from pydantic import BaseModel, Field

from weclaw_desktop.paths import tools_json_path
from weclaw_desktop.toolkit import ToolRegistry
from weclaw_desktop.toolkit.base import ActionDef, BaseTool
from weclaw_desktop.toolkit.diagnostics import Code
from weclaw_desktop.toolkit.exposure import ExposurePlanner
from weclaw_desktop.toolkit.manifest import ToolSpec
from weclaw_desktop.toolkit.policy import Policy
from weclaw_desktop.toolkit.schema import MAX_CHARS, SchemaProblem, check, openai_parameters, prepare

#: A self-referencing schema as servers send it (a file-system tree; the node refers to itself and the
#: root refers to the node): 400-odd characters that main unrolled 24 levels deep into 46,693 characters
#: of invalid JSON Schema.
SELF_REFERENCING = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "title": "WriteTree",
    "properties": {
        "root": {"$ref": "#/$defs/Node", "description": "The top folder"},
        "mirror": {"$ref": "#", "description": "Another request of the same shape"},
    },
    "required": ["root"],
    "$defs": {
        "Node": {
            "type": "object",
            "title": "Node",
            "description": "A file or a folder",
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                "parent": {"$ref": "#/$defs/Node"},
            },
            "required": ["name"],
        }
    },
}


def _valid(schema: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator.check_schema(schema)


def test_a_self_referencing_schema_is_valid_and_under_2_kb() -> None:
    out = prepare(SELF_REFERENCING)
    text = json.dumps(out)
    _valid(out)
    assert len(text) < 2048, len(text)
    node = out["properties"]["root"]
    assert node["properties"]["name"] == {"type": "string", "minLength": 1}  # the first level is described
    assert node["description"] == "The top folder"
    repeat = node["properties"]["children"]["items"]
    assert repeat["type"] == "object" and "recursive" in repeat["description"]
    assert "additionalProperties" not in repeat  # an open object: any node is accepted, not "must be empty"
    assert "recursive" in out["properties"]["mirror"]["description"]
    assert "$ref" not in text and '"title"' not in text and "$schema" not in text
    # The server's own (unrolled) validation still applies on every call: the shown schema accepts a deep tree.
    deep = {"root": {"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}]}}
    jsonschema.Draft202012Validator(out).validate(deep)


def test_free_form_objects_and_additional_properties_are_kept() -> None:
    schema = {
        "type": "object",
        "properties": {
            "options": {"type": "object", "description": "Anything the server understands"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "strict": {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False},
            "loose": {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": True},
        },
        "additionalProperties": True,
    }
    out = prepare(schema)
    _valid(out)
    assert out["additionalProperties"] is True  # the root accepts more: not "no arguments"
    assert out["properties"]["options"] == {"type": "object", "description": "Anything the server understands"}
    assert out["properties"]["labels"]["additionalProperties"] == {"type": "string"}
    assert out["properties"]["strict"]["additionalProperties"] is False
    assert out["properties"]["loose"]["additionalProperties"] is True
    # a root that says nothing is closed: the dispatcher refuses arguments it does not name
    assert prepare({"type": "object", "properties": {"a": {"type": "string"}}})["additionalProperties"] is False


def test_data_values_are_copied_not_walked() -> None:
    schema = {
        "type": "object",
        "properties": {
            "title": {"type": "string", "title": "Title", "default": "x"},
            "$ref": {"type": "string"},
            "doc": {"type": "object", "default": {"title": "kept", "$ref": "#/nowhere", "type": "object"}},
        },
    }
    out = prepare(schema)
    assert set(out["properties"]) == {"title", "$ref", "doc"}
    assert out["properties"]["title"] == {"type": "string", "default": "x"}
    assert out["properties"]["doc"]["default"] == {"title": "kept", "$ref": "#/nowhere", "type": "object"}
    _valid(out)


def test_older_drafts_become_2020_12() -> None:
    draft7 = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "definitions": {"Point": {"type": "array", "items": [{"type": "number"}, {"type": "number"}]}},
        "properties": {
            "at": {"$ref": "#/definitions/Point"},
            "pair": {"type": "array", "items": [{"type": "string"}], "additionalItems": False},
            "ratio": {
                "type": "number",
                "maximum": 1,
                "exclusiveMaximum": True,
                "minimum": 0,
                "exclusiveMinimum": False,
            },
        },
    }
    out = prepare(draft7)
    _valid(out)
    assert out["properties"]["at"] == {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}]}
    assert out["properties"]["pair"] == {"type": "array", "prefixItems": [{"type": "string"}], "items": False}
    assert out["properties"]["ratio"] == {"type": "number", "exclusiveMaximum": 1, "minimum": 0}


def test_definitions_shared_many_times_are_kept_once_under_defs() -> None:
    """A chain of definitions each used twice doubles at every level when inlined (2^30 nodes here)."""
    defs: dict[str, Any] = {
        f"D{i}": {
            "type": "object",
            "properties": {"a": {"$ref": f"#/$defs/D{i + 1}"}, "b": {"$ref": f"#/$defs/D{i + 1}"}},
        }
        for i in range(30)
    }
    defs["D30"] = {"type": "string"}
    out = prepare({"type": "object", "properties": {"x": {"$ref": "#/$defs/D0"}}, "$defs": defs})
    _valid(out)
    assert out["properties"]["x"] == {"$ref": "#/$defs/D0"}
    assert set(out["$defs"]) == {f"D{i}" for i in range(31)}
    assert len(json.dumps(out)) < 4000
    check(out)  # every reference resolves


def test_remote_and_missing_references_become_described_open_values() -> None:
    out = prepare(
        {
            "type": "object",
            "properties": {
                "geo": {"$ref": "https://example.com/geo.json", "description": "A place"},
                "gone": {"$ref": "#/$defs/Missing"},
            },
        }
    )
    _valid(out)
    assert out["properties"]["geo"]["description"].startswith("A place (described elsewhere")
    assert "$ref" not in json.dumps(out)


def test_schemas_that_cannot_be_made_valid_are_refused() -> None:
    with pytest.raises(SchemaProblem, match="not valid JSON Schema at properties/x/type"):
        prepare({"type": "object", "properties": {"x": {"type": "no-such-type"}}})
    with pytest.raises(SchemaProblem, match="too large"):
        prepare(
            {
                "type": "object",
                "properties": {f"p{i}": {"type": "string", "description": "d" * 200} for i in range(200)},
            }
        )
    assert MAX_CHARS < 200 * 220


def _old_inline(model: type[BaseModel]) -> dict[str, Any]:
    """main's pipeline for built-in models before this change, kept as the reference for byte identity."""
    raw = model.model_json_schema(mode="validation")
    defs: dict[str, Any] = raw.pop("$defs", {})

    def walk(node: Any, depth: int) -> Any:
        if isinstance(node, list):
            return [walk(item, depth + 1) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            target = copy.deepcopy(defs[node["$ref"].rsplit("/", 1)[-1]])
            return walk({**target, **{k: v for k, v in node.items() if k != "$ref"}}, depth + 1)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "title" and not isinstance(value, dict):
                continue
            if key in ("properties", "$defs", "patternProperties"):
                out[key] = {name: walk(sub, depth + 1) for name, sub in value.items()}
            else:
                out[key] = walk(value, depth + 1)
        if out.get("type") == "object" and "additionalProperties" not in out:
            out["additionalProperties"] = False
        return out

    schema = walk(raw, 0)
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return dict(schema)


def test_every_built_in_schema_is_valid_and_byte_identical_to_before() -> None:
    registry = ToolRegistry.from_path(tools_json_path())
    count = 0
    for tool in registry.tool_names(include_disabled=True):
        try:
            cls = registry.load_class(tool)
        except Exception:  # an optional dependency missing here; its schema is checked where it loads
            continue
        for action in cls.action_defs():
            new = action.parameters_schema()
            _valid(new)
            assert json.dumps(new) == json.dumps(_old_inline(action.params)), f"{tool}.{action.name}"
            count += 1
    assert count >= 49  # every action of tools.json (49 when this was written)


class _Tree(BaseModel):
    label: str
    kids: list[_Tree] = Field(default_factory=list)


class _TreeParams(BaseModel):
    tree: _Tree


def test_a_recursive_pydantic_model_is_described_not_refused() -> None:
    out = openai_parameters(_TreeParams)  # main raised "nests too deeply" here
    _valid(out)
    tree = out["properties"]["tree"]
    assert tree["additionalProperties"] is False and tree["properties"]["label"] == {"type": "string"}
    assert "recursive" in tree["properties"]["kids"]["items"]["description"]
    assert "additionalProperties" not in tree["properties"]["kids"]["items"]


class _Broken(BaseModel):
    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return {"type": "object", "properties": {"x": {"type": 5}}}


class _Two(BaseTool):
    def get_actions(self) -> list[ActionDef]:
        return [
            ActionDef(name="good", description="works", params=_TreeParams),
            ActionDef(name="bad", description="broken schema", params=_Broken),
        ]


def test_a_function_whose_schema_cannot_be_sent_is_hidden_alone_with_a_diagnostic() -> None:
    from helpers import manifest

    registry = ToolRegistry(manifest())
    spec = ToolSpec.model_validate(
        {
            "module": __name__,
            "class": "_Two",
            "actions": ["good", "bad"],
            "description": {"en": "two", "zh": "二"},
            "display": {"name": {"en": "Two", "zh": "二"}, "category": "test"},
        }
    )
    registry.register_dynamic("two", spec, _Two(name="two"))
    rnd = ExposurePlanner(registry, policy=Policy).compute(schemas=True)
    assert "two_good" in rnd.functions and "two_bad" not in rnd.functions
    assert "two" in rnd.tools  # the tool's other function is still offered
    [diag] = rnd.hidden_functions["two_bad"]
    assert diag.code is Code.SCHEMA_INVALID and "properties/x/type" in diag.message
    assert rnd.why_hidden("two", "two_bad") == (diag,)
    for d in rnd.schemas:
        _valid(d["function"]["parameters"])


class _Many(BaseTool):
    def get_actions(self) -> list[ActionDef]:
        return [ActionDef(name=f"t{i:03d}", description=f"tool {i}", params=_TreeParams) for i in range(150)]


def test_the_cap_takes_the_functions_of_a_big_server_that_fit() -> None:
    """main dropped a whole MCP server over 128 functions without a word; now the first ones that fit are
    offered (the same ones every round) and the rest are named in ``dropped``."""
    from helpers import manifest

    registry = ToolRegistry(manifest())
    spec = ToolSpec.model_validate(
        {
            "module": __name__,
            "class": "_Many",
            "actions": [f"t{i:03d}" for i in range(150)],
            "description": {"en": "many", "zh": "多"},
            "display": {"name": {"en": "Many", "zh": "多"}, "category": "mcp"},
        }
    )
    registry.register_dynamic("mcp_big", spec, _Many(name="mcp_big"))
    planner = ExposurePlanner(registry, policy=Policy)
    rnd = planner.compute(schemas=True)
    assert len(rnd.functions) == 128 and "mcp_big" in rnd.tools
    offered = [f for f in rnd.functions if f.startswith("mcp_big_")]
    assert offered == [f"mcp_big_t{i:03d}" for i in range(len(offered))]
    assert "of its functions are over the 128-function limit: mcp_big_t" in rnd.dropped["mcp_big"]
    assert planner.compute(schemas=True).functions == rnd.functions  # stable from round to round
    assert planner.compute().functions == rnd.functions  # with or without schemas
