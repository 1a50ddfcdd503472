"""`weclaw tools`: availability and diagnostics; `--schema`: OpenAI definitions of every enabled tool."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import base_manifest, write

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "weclaw_desktop", *args], cwd=ROOT, capture_output=True, text=True, timeout=120, env=ENV
    )


def test_tools_json_output_shows_hidden_reasons(tmp_path: Path) -> None:
    path = write(tmp_path, base_manifest())
    out = run("tools", "--tools", str(path), "--json")
    assert out.returncode == 0, out.stderr
    rows = {r["name"]: r for r in json.loads(out.stdout)}
    assert rows["echo"]["available"] is True
    assert [a["function"] for a in rows["echo"]["actions"]] == ["echo_say", "echo_shout"]
    assert rows["bridged"]["available"] is False
    assert rows["bridged"]["diagnostics"][0]["code"] == "bridge-missing"
    text = run("tools", "--tools", str(path))
    assert "! bridge-missing: needs the clipboard service" in text.stdout
    assert text.stdout.strip().endswith("3 tools: 2 available, 1 hidden")


def test_tools_schema_includes_bridged_tools(tmp_path: Path) -> None:
    out = run("tools", "--tools", str(write(tmp_path, base_manifest())), "--schema")
    defs = json.loads(out.stdout)
    names = [d["function"]["name"] for d in defs]
    assert "bridged_paste" in names and len(names) == 7
    assert all(d["type"] == "function" and d["function"]["parameters"]["type"] == "object" for d in defs)


def test_broken_tools_json_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text('{"version": 1, "tools": {"x": {"modul": "a"}}}', encoding="utf-8")
    out = run("tools", "--tools", str(path))
    assert out.returncode == 1
    assert "unknown key 'modul'; did you mean 'module'?" in out.stderr
    assert "Traceback" not in out.stderr
