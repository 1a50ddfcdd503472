"""`weclaw validate`: each consistency check catches what it is for, and the real tools.json passes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import base_manifest, tool_entry, write
from pydantic import ValidationError

from weclaw_desktop.toolkit.manifest import Manifest
from weclaw_desktop.toolkit.validator import Level, openai_schema_problems, validate_manifest, validate_path

ROOT = Path(__file__).resolve().parents[2]


def _report(data: dict) -> dict[str, tuple[str, str]]:
    report = validate_manifest(Manifest.model_validate(data))
    return {c.name: (c.level.value, c.detail) for c in report.checks}


def test_sample_manifest_passes() -> None:
    report = validate_manifest(Manifest.model_validate(base_manifest()))
    assert report.ok, report.lines()
    assert report.by_name("modules").detail == "3 enabled tools import and are BaseTool subclasses"


def test_missing_module_and_class() -> None:
    data = base_manifest()
    data["tools"]["ghost"] = tool_entry("EchoTool", ["say"], module="nope_mod_v")
    data["tools"]["noclass"] = tool_entry("Nope", ["say"])
    data["intents"]["talk"]["tools"] += ["ghost", "noclass"]
    level, detail = _report(data)["modules"]
    assert level == "fail"
    assert detail.startswith("2 of 5 enabled tools")
    assert "tool 'ghost': module 'nope_mod_v' cannot be imported" in detail
    assert "tool 'noclass': module 'sample_tools' has no class 'Nope'" in detail


def test_action_mismatch() -> None:
    data = base_manifest()
    data["tools"]["echo"]["actions"] = ["say", "whisper"]
    assert _report(data)["actions"] == (
        "fail",
        "1 of 3 tools whose tools.json actions equal the class's actions: echo: class lacks whisper and tools.json lacks shout",
    )


def test_bad_config() -> None:
    data = base_manifest()
    data["tools"]["echo"]["config"] = {"prefix": 3}
    level, detail = _report(data)["config"]
    assert level == "fail" and "tool 'echo': invalid config: prefix: Input should be a valid string" in detail


def test_function_name_rules() -> None:
    data = base_manifest()
    long_tool = "t" * 60
    data["tools"][long_tool] = tool_entry("EchoTool", ["say", "shout"])
    data["intents"]["talk"]["tools"].append(long_tool)
    level, detail = _report(data)["function names"]
    assert level == "fail" and f"{long_tool}_say is 64 characters" not in detail
    assert f"{long_tool}_shout is 66 characters (max 64)" in detail


def test_bad_intent_reference_and_subsets() -> None:
    data = base_manifest()
    data["intents"]["talk"]["tools"].append("missing_tool")
    data["intents"]["talk"]["recommended"].append("stranger")
    level, detail = _report(data)["intents"]
    assert level == "fail"
    assert "intent talk references unknown tool 'missing_tool'" in detail
    assert "intent talk: recommended not in its tools: stranger" in detail


def test_unreachable_tool_and_always_on() -> None:
    data = base_manifest()
    data["tools"]["lonely"] = tool_entry("EchoTool", ["say", "shout"])
    assert _report(data)["reachability"][0] == "fail"
    data["tools"]["lonely"]["always_on"] = True
    assert _report(data)["reachability"][0] == "pass"


def test_unknown_bridge_and_dependency() -> None:
    data = base_manifest()
    data["tools"]["echo"]["bridges"] = ["teleporter"]
    data["tools"]["echo"]["depends_on"] = ["nothing_here"]
    level, detail = _report(data)["references"]
    assert level == "fail"
    assert (
        "echo needs unknown bridge 'teleporter'" in detail and "echo depends on unknown tool 'nothing_here'" in detail
    )


def test_empty_and_duplicate_keywords() -> None:
    data = base_manifest()
    data["intents"]["talk"]["action_phrases"] = {"zh": ["重复", " "], "en": ["Echo", "echo"]}
    level, detail = _report(data)["keywords"]
    assert level == "fail"
    assert "intent talk has an empty keyword" in detail and "intent talk repeats: echo" in detail


def test_every_intent_needs_action_phrases_in_both_languages() -> None:
    """A request in either language must be able to route on its own: an intent with topic words only, or
    action phrases in one language only, fails validation and says which list is missing."""
    data = base_manifest()
    data["intents"]["talk"]["action_phrases"] = {"zh": [], "en": ["echo"]}
    data["intents"]["talk"]["topics"] = {"zh": ["重复"], "en": []}
    level, detail = _report(data)["keywords"]
    assert level == "fail"
    assert "intent talk has no action phrase in zh (action_phrases.zh)" in detail


def test_a_word_cannot_be_both_action_and_topic_and_markers_must_exist() -> None:
    """A phrase is either strong or weak, not both; a misspelt marker (‹paht›) could never match and fails."""
    data = base_manifest()
    data["intents"]["talk"]["action_phrases"] = {"zh": ["重复"], "en": ["echo", "say * ‹paht›"]}
    data["intents"]["talk"]["topics"] = {"zh": [], "en": ["Echo"]}
    level, detail = _report(data)["keywords"]
    assert level == "fail"
    assert "both an action phrase and a topic: echo" in detail
    assert "unknown markers: ‹paht›" in detail


def test_the_old_keyword_names_say_what_they_became() -> None:
    """tools.json written for the old names ('keywords', 'weak') gets a message naming the new ones."""
    data = base_manifest()
    data["intents"]["talk"]["keywords"] = data["intents"]["talk"].pop("action_phrases")
    with pytest.raises(ValidationError) as info:
        Manifest.model_validate(data)
    assert "'keywords' is now 'action_phrases'" in str(info.value)


def test_schema_rules_for_openai() -> None:
    free_form = {"type": "object", "additionalProperties": True}  # a dict[str, Any] argument is fine
    assert (
        openai_schema_problems({"type": "object", "properties": {"m": free_form}, "additionalProperties": False}) == []
    )
    open_b = {"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": True}
    problems = openai_schema_problems({"type": "array", "properties": {"a": {"$ref": "#/$defs/A"}, "b": open_b}})
    assert "top level must be {'type': 'object'}" in problems
    assert "parameters.properties.a: $ref/$defs are not inlined" in problems
    assert "parameters.properties.b: objects with properties must set additionalProperties: false" in problems
    assert "top level must set additionalProperties: false" in problems
    assert any(p.startswith("not a valid JSON Schema") for p in openai_schema_problems({"type": 5, "properties": {}}))


def test_broken_file_is_one_failing_check(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text("{not json", encoding="utf-8")
    report = validate_path(path)
    assert not report.ok and report.checks[0].level is Level.FAIL


def test_real_tools_json_passes_validation() -> None:
    report = validate_path(ROOT / "tools.json")
    assert report.ok, "\n".join(report.lines())


def test_cli_validate_exit_codes(tmp_path: Path) -> None:
    ok = subprocess.run(
        [sys.executable, "-m", "weclaw_desktop", "validate"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "PASS  modules:" in ok.stdout
    data = base_manifest()
    data["tools"]["echo"]["actions"] = ["say"]
    bad = subprocess.run(
        [sys.executable, "-m", "weclaw_desktop", "validate", "--tools", str(write(tmp_path, data))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**__import__("os").environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    assert bad.returncode == 1
    assert "FAIL  actions: 1 of 3" in bad.stdout
