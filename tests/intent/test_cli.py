"""``weclaw intent``: the batch format the evaluation script reads, and the readable route."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from weclaw_desktop.toolkit.manifest import Manifest
from weclaw_desktop.toolkit.registry import ToolRegistry

ROOT = Path(__file__).resolve().parents[2]


def weclaw(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "weclaw_desktop", *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=ROOT,
        timeout=60,
    )


@pytest.fixture
def tools_json(tmp_path: Path, real_manifest: Manifest) -> Path:
    """The real catalogue with every tool enabled (and one disabled again, to see it excluded)."""
    data = real_manifest.model_dump(mode="json", by_alias=True, exclude_none=True)
    data["tools"]["email"]["enabled"] = False
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_jsonl_rows_follow_the_contract_in_input_order(tools_json: Path, real_manifest: Manifest) -> None:
    requests = [
        {"id": "a", "text": "把 ~/报告.docx 压缩一下发到我手机"},
        {"id": 7, "text": "你好"},
        {"id": "c", "text": "Email bob@x.org the minutes"},
    ]
    proc = weclaw(
        "intent", "--jsonl", "--tools", str(tools_json), stdin="".join(json.dumps(r) + "\n" for r in requests)
    )
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["id"] for r in rows] == ["a", 7, "c"]
    for row in rows:
        assert set(row) == {"id", "tier", "confidence", "intents", "tools", "always_on", "functions"}
        assert row["always_on"] == ["tool_search"]
        assert row["functions"][0] == "tool_search_find"

    multi = rows[0]
    assert multi["tier"] == "recommended"
    assert {"archive", "remote_file_share"} <= set(multi["tools"])
    assert {i["name"] for i in multi["intents"]} >= {"archive", "phone"}
    registry = ToolRegistry(real_manifest)
    expected = [f for t in ["tool_search", *multi["tools"]] for f in registry.functions_of(t)]
    assert multi["functions"] == expected

    assert rows[1] == {
        "id": 7,
        "tier": "clarify",
        "confidence": 0.0,
        "intents": [],
        "tools": [],
        "always_on": ["tool_search"],
        "functions": ["tool_search_find"],
    }
    assert "email" not in rows[2]["tools"]  # disabled in this tools.json


def test_jsonl_bad_line_keeps_the_order_and_fails_the_exit_status(tools_json: Path) -> None:
    proc = weclaw(
        "intent", "--jsonl", "--tools", str(tools_json), stdin='{"id": 1, "text": "截图"}\nnot json\n{"id": 3}\n'
    )
    assert proc.returncode == 1
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["id"] for r in rows] == [1, None, 3]
    assert rows[0]["tools"] == ["screen"]
    assert rows[1]["tools"] == [] and "line 2" in rows[1]["error"]
    assert "line 3" in proc.stderr


def test_readable_output_explains_the_route(tools_json: Path) -> None:
    proc = weclaw("intent", "--tools", str(tools_json), "截个图发到我手机")
    assert proc.returncode == 0, proc.stderr
    assert "tier:       recommended" in proc.stdout
    assert "screen" in proc.stdout and "remote_file_share" in proc.stdout
    assert "keywords:" in proc.stdout


def test_no_text_is_a_usage_error() -> None:
    proc = weclaw("intent")
    assert proc.returncode == 2
    assert "give a request" in proc.stderr


def test_jsonl_lines_may_carry_the_conversation_before_them(tools_json: Path) -> None:
    """A line's "history" routes it as a follow-up: "run it" after code routes to the runner, "thanks"
    after a tool turn exposes nothing; a malformed history is an error row, and the other lines survive."""
    code = {"user": "write fib in python", "assistant": "```python\nprint(1)\n```", "tools": []}
    shot = {"user": "take a screenshot", "assistant": "Saved ~/outputs/s.png", "tools": ["screen"]}
    lines = [
        {"id": "a", "text": "run it", "history": [code]},
        {"id": "b", "text": "thanks!", "history": [shot]},
        {"id": "c", "text": "run it"},
        {"id": "d", "text": "run it", "history": [{"user": 5}]},
    ]
    proc = weclaw("intent", "--jsonl", "--tools", str(tools_json), stdin="".join(json.dumps(x) + "\n" for x in lines))
    assert proc.returncode == 1
    rows = {r["id"]: r for r in map(json.loads, proc.stdout.splitlines())}
    assert rows["a"]["tools"] == ["python_runner"]
    assert rows["b"]["tools"] == []
    assert rows["c"]["tools"] == []  # no conversation: 'it' points at nothing
    assert "history" in rows["d"]["error"]


def test_after_routes_the_text_as_a_follow_up(tools_json: Path) -> None:
    proc = weclaw("intent", "--tools", str(tools_json), "--after", "remind me at 5 to call mom", "actually make it 6")
    assert proc.returncode == 0, proc.stderr
    assert "carried:    reminder" in proc.stdout
    assert "clauses:    request" in proc.stdout
