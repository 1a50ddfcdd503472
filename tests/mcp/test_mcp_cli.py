"""``weclaw tools`` lists the MCP servers of the settings, with the diagnostics of those that are down."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from weclaw_desktop.cli import main
from weclaw_desktop.settings import McpServerSettings, Settings, SettingsStore


def test_weclaw_tools_shows_a_down_server_with_its_diagnostic(capsys: Any, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-server"
    SettingsStore.open().save(
        Settings(
            mcp_servers=[
                McpServerSettings(name="gone", command=str(missing)),
                McpServerSettings(name="off", enabled=False, command="x"),
            ]
        )
    )
    assert main(["tools", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert "mcp_off" not in rows
    gone = rows["mcp_gone"]
    assert gone["available"] is False and gone["category"] == "mcp"
    [diag] = gone["diagnostics"]
    assert diag["code"] == "server-unavailable"
    assert diag["message"].startswith(
        f"MCP server 'gone' is not running: the command '{missing}' was not found; check the path or install it"
    )

    assert main(["tools", "--no-mcp", "--json"]) == 0
    assert not [r for r in json.loads(capsys.readouterr().out) if r["name"].startswith("mcp_")]


def test_weclaw_tools_schema_includes_mcp_tools(capsys: Any, tmp_path: Path) -> None:
    """main printed only the built-in tools; the MCP servers' functions are what a model is sent too."""
    import sys

    import jsonschema

    server = Path(__file__).resolve().parent / "sdk_server.py"
    SettingsStore.open().save(
        Settings(mcp_servers=[McpServerSettings(name="sdk", command=sys.executable, args=[str(server)])])
    )
    assert main(["tools", "--schema"]) == 0
    defs = {d["function"]["name"]: d["function"] for d in json.loads(capsys.readouterr().out)}
    assert "mcp_sdk_write_tree" in defs and "datetime_now" in defs
    for d in defs.values():
        jsonschema.Draft202012Validator.check_schema(d["parameters"])
    assert main(["tools", "--schema", "--no-mcp"]) == 0
    assert not [n for n in json.loads(capsys.readouterr().out) if n["function"]["name"].startswith("mcp_")]
