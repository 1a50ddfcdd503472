"""tools.json parsing: strict keys with suggestions, readable errors, and the committed schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import base_manifest, write

from weclaw_desktop.paths import resource_path, tools_json_path
from weclaw_desktop.toolkit.manifest import ManifestError, load_manifest, parse_manifest, render_manifest_schema


def _problems(data: dict) -> list[str]:
    with pytest.raises(ManifestError) as info:
        parse_manifest(json.dumps(data))
    return info.value.problems


def test_base_manifest_parses() -> None:
    m = parse_manifest(json.dumps(base_manifest()))
    assert list(m.tools) == ["echo", "faulty", "bridged"]
    assert m.tools["echo"].class_name == "EchoTool"
    assert m.exposure.max_functions == 128


def test_unknown_tool_key_names_key_and_closest_valid_one() -> None:
    data = base_manifest()
    data["tools"]["echo"]["modle"] = "x"
    problems = _problems(data)
    assert problems == ["tools.echo: unknown key 'modle'; did you mean 'module'?"]


def test_unknown_top_level_key() -> None:
    data = base_manifest()
    data["intnets"] = {}
    assert _problems(data) == ["unknown key 'intnets'; did you mean 'intents'?"]


def test_unknown_key_inside_requires() -> None:
    data = base_manifest()
    data["tools"]["echo"]["requires"] = {"allOf": [{"bridge": "clipboard"}, {"secert": "x"}]}
    (problem,) = _problems(data)
    assert "unknown key 'secert' in requires.allOf[1]; did you mean 'secret'?" in problem


def test_duplicate_json_key_is_an_error() -> None:
    text = '{"version": 1, "tools": {}, "tools": {}}'
    with pytest.raises(ManifestError) as info:
        parse_manifest(text)
    assert info.value.problems == ["key 'tools' appears twice in the same object"]


def test_broken_json_reports_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text('{"version": 1,\n "tools": {,}}', encoding="utf-8")
    with pytest.raises(ManifestError) as info:
        load_manifest(path)
    assert info.value.problems[0].startswith(
        "not valid JSON: Expecting property name enclosed in double quotes at line 2"
    )


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ManifestError) as info:
        load_manifest(tmp_path / "nope.json")
    assert "cannot read" in info.value.problems[0]


def test_action_risk_for_unknown_action() -> None:
    data = base_manifest()
    data["tools"]["echo"]["action_risk"] = {"yell": "high"}
    (problem,) = _problems(data)
    assert "action_risk names actions that are not in 'actions': yell" in problem


def test_bad_tool_name_and_thresholds() -> None:
    data = base_manifest()
    data["tools"]["Bad-Name"] = data["tools"].pop("echo")
    data["exposure"] = {"high_threshold": 0.2, "medium_threshold": 0.5}
    problems = _problems(data)
    assert any("tool names must match" in p and "Bad-Name" in p for p in problems)
    assert any("medium_threshold must not exceed high_threshold" in p for p in problems)


def test_committed_schema_is_current() -> None:
    committed = resource_path("schema", "tools.schema.json").read_text(encoding="utf-8")
    assert committed == render_manifest_schema(), "run `weclaw schema --write` and commit the result"


def test_real_tools_json_references_the_schema_and_parses() -> None:
    raw = json.loads(tools_json_path().read_text(encoding="utf-8"))
    assert raw["$schema"] == "./resources/schema/tools.schema.json"
    assert load_manifest(tools_json_path()).tools


def test_written_manifest_loads(tmp_path: Path) -> None:
    path = write(tmp_path, base_manifest())
    assert load_manifest(path).tools["faulty"].timeout_s == 0.5
