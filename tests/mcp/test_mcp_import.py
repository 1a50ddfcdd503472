"""Import and export of the ecosystem's mcpServers JSON: every shape people paste, the secret rule (to the
keyring, never settings.json), names that need changing, bad entries reported and the rest imported, and
``weclaw mcp import / list / export`` on real files through the settings store."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from weclaw_desktop.cli import main
from weclaw_desktop.mcp.config import secret_key
from weclaw_desktop.mcp.importer import ConfigImportError, export_config, looks_secret, parse_config
from weclaw_desktop.paths import app_paths
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import McpServerSettings, Settings, SettingsStore

CLAUDE = {
    "mcpServers": {
        "github": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-github"],
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_0123456789abcdefghij", "LOG_LEVEL": "info"},
        },
        "filesystem": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"],
        },
    }
}
CURSOR = {
    "mcpServers": {
        "remote": {
            "url": "https://mcp.example.com/mcp",
            "headers": {"Authorization": "Bearer abc.def", "X-Team": "t1"},
        },
        "old": {"url": "https://legacy.example.com/sse"},
    }
}
VSCODE = {
    "inputs": [{"id": "key", "type": "promptString", "password": True}],
    "servers": {
        "perplexity": {"type": "stdio", "command": "npx", "args": ["x"], "env": {"PERPLEXITY_API_KEY": "${input:key}"}},
        "web": {"type": "http", "url": "https://web.example.com/mcp"},
    },
}
CLINE = {
    "mcpServers": {
        "brave": {
            "command": "npx",
            "args": ["brave"],
            "env": {"BRAVE_API_KEY": "k-1"},
            "disabled": True,
            "autoApprove": ["brave_web_search"],
            "timeout": 120,
        }
    }
}


def test_the_secret_rule_is_declared_data() -> None:
    secret = [
        "GITHUB_PERSONAL_ACCESS_TOKEN",
        "API_KEY",
        "apiKey",
        "X-Api-Key",
        "DB_PASSWORD",
        "SLACK_BOT_TOKEN",
        "Cookie",
    ]
    plain = ["PATH", "KEYWORDS", "LOG_LEVEL", "NODE_OPTIONS", "TZ", "MONKEY", "BASE_URL", "X-Team"]
    assert [n for n in secret if not looks_secret(n, "v", header=n[0] == "X" or n == "Cookie")] == []
    assert [n for n in plain if looks_secret(n, "v")] == []
    assert looks_secret("SOMETHING", "sk-abcdefghijklmnop")  # the value looks like a credential
    assert looks_secret("Authorization", "x", header=True)


def test_claude_desktop_config() -> None:
    plan = parse_config(json.dumps(CLAUDE))
    github, fs = plan.servers
    assert github.settings.env == {"LOG_LEVEL": "info"}  # the token is not in the settings
    assert github.settings.secret_env == ["GITHUB_PERSONAL_ACCESS_TOKEN"]
    assert github.secrets() == {"mcp.github.env.GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_0123456789abcdefghij"}
    assert fs.settings.args[-1] == "/Users/me/Desktop" and fs.secrets() == {}
    assert plan.problems == []


def test_cursor_remote_servers_and_legacy_sse() -> None:
    remote, old = parse_config(json.dumps(CURSOR)).servers
    assert (remote.settings.transport, remote.settings.url) == ("http", "https://mcp.example.com/mcp")
    assert remote.settings.headers == {"X-Team": "t1"} and remote.settings.secret_headers == ["Authorization"]
    assert old.settings.transport == "sse"


def test_vs_code_servers_and_unexpanded_inputs_are_said() -> None:
    perplexity, web = parse_config(json.dumps(VSCODE)).servers
    assert perplexity.settings.secret_env == ["PERPLEXITY_API_KEY"]
    assert any("${...}" in n for n in perplexity.notes)
    assert web.settings.transport == "http"


def test_cline_fields() -> None:
    [brave] = parse_config(json.dumps(CLINE)).servers
    assert brave.settings.enabled is False and brave.settings.timeout_s == 120
    assert brave.settings.tool_approval == {"brave_web_search": "allow"}


def test_the_user_can_overrule_the_guess() -> None:
    plan = parse_config(json.dumps(CLAUDE))
    github = plan.servers[0]
    assert github.set_secret("LOG_LEVEL", True) and github.set_secret("GITHUB_PERSONAL_ACCESS_TOKEN", False)
    assert github.settings.env == {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_0123456789abcdefghij"}
    assert github.settings.secret_env == ["LOG_LEVEL"]
    assert not github.set_secret("NOPE", True)


def test_names_are_made_valid_and_unique_and_bad_entries_are_reported() -> None:
    doc = {
        "mcpServers": {
            "天气 查询": {"command": "uvx", "args": ["weather"]},
            "github": {"command": "npx"},
            "a" * 40: {"command": "x"},
            "ws": {"type": "websocket", "url": "wss://x"},
            "empty": {},
            "list": ["not", "an", "object"],
        }
    }
    plan = parse_config(json.dumps(doc), existing=["github"])
    assert [s.name for s in plan.servers] == ["TianQi-ChaXun", "github-2", "a" * 32]
    assert plan.servers[0].notes == ["renamed from '天气 查询'"]
    assert plan.problems == [
        "'ws': not imported: its type 'websocket' is not one WeClaw can connect with (stdio, http, sse)",
        "'empty': not imported: it has neither a command nor a url",
        "'list': not imported: its settings must be an object",
    ]
    replaced = parse_config(
        json.dumps({"mcpServers": {"github": {"command": "npx"}}}), existing=["github"], replace=True
    )
    assert replaced.servers[0].name == "github" and replaced.servers[0].replaces


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not valid JSON: Expecting property name enclosed in double quotes at line 1 column 2"),
        ("[1, 2]", 'must be a JSON object with an "mcpServers" object'),
        ('{"mcpServers": []}', '"mcpServers" must be an object of servers'),
        ('{"command": "npx"}', "one server without a name"),
        ('{"theme": "dark"}', 'no "mcpServers"'),
    ],
)
def test_text_that_is_not_a_configuration_says_why(text: str, message: str) -> None:
    with pytest.raises(ConfigImportError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_config(text)


def test_export_imports_back_as_it_was(memory_keyring: Any) -> None:
    servers = [
        McpServerSettings(
            name="gh",
            command="npx",
            args=["-y", "gh"],
            env={"A": "1"},
            secret_env=["TOKEN"],
            trusted=True,
            keywords=["代码"],
            tool_approval={"delete_repo": "deny"},
            timeout_s=90,
        ),
        McpServerSettings(name="web", transport="sse", url="https://x.example.com/sse", enabled=False, auth="oauth"),
    ]
    SecretStore().set(secret_key("gh", "env", "TOKEN"), "tok-secret-value-1")
    without = export_config(servers)
    assert "TOKEN" not in json.dumps(without)  # secret values only when asked for
    back = parse_config(json.dumps(export_config(servers, SecretStore()))).servers
    assert [s.settings for s in back] == servers
    assert back[0].secrets() == {"mcp.gh.env.TOKEN": "tok-secret-value-1"}


# --- the command ---------------------------------------------------------------------------------
def _write(tmp_path: Path, doc: dict[str, Any], name: str = "claude_desktop_config.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


def test_weclaw_mcp_import_list_export(tmp_path: Path, memory_keyring: Any, capsys: Any) -> None:
    SettingsStore.open().update(lambda s: setattr(s.provider, "model", "kept-model"))
    source = _write(tmp_path, CLAUDE)
    assert main(["mcp", "import", str(source), "--dry-run"]) == 0
    assert SettingsStore.open().settings.mcp_servers == []  # a dry run changes nothing
    assert main(["mcp", "import", str(source), "--yes"]) == 0
    err = capsys.readouterr().err
    assert (
        "env GITHUB_PERSONAL_ACCESS_TOKEN: secret, goes to the keyring" in err
        and "Imported 2: github, filesystem" in err
    )
    text = app_paths().settings_file.read_text(encoding="utf-8")
    assert "ghp_0123456789abcdefghij" not in text  # the secret never touches settings.json
    assert SecretStore().get("mcp.github.env.GITHUB_PERSONAL_ACCESS_TOKEN") == "ghp_0123456789abcdefghij"
    settings = SettingsStore.open().settings
    assert settings.provider.model == "kept-model" and [s.name for s in settings.mcp_servers] == [
        "github",
        "filesystem",
    ]

    assert main(["mcp", "import", str(source), "--yes"]) == 0  # again: renamed, never overwritten
    assert [s.name for s in SettingsStore.open().settings.mcp_servers] == [
        "github",
        "filesystem",
        "github-2",
        "filesystem-2",
    ]
    capsys.readouterr()
    assert main(["mcp", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["secrets"] == ["GITHUB_PERSONAL_ACCESS_TOKEN"] and rows[0]["target"].startswith("npx -y")
    assert main(["mcp", "export"]) == 0
    out = capsys.readouterr()
    assert "ghp_" not in out.out and "github.GITHUB_PERSONAL_ACCESS_TOKEN" in out.err
    assert main(["mcp", "export", "--include-secrets"]) == 0
    assert "ghp_0123456789abcdefghij" in capsys.readouterr().out


def test_bad_files_change_nothing(tmp_path: Path, memory_keyring: Any, capsys: Any) -> None:
    before = Settings(mcp_servers=[McpServerSettings(name="mine", command="x")])
    SettingsStore.open().save(before)
    bad = tmp_path / "bad.json"
    bad.write_text("{oops", encoding="utf-8")
    assert main(["mcp", "import", str(bad), "--yes"]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert main(["mcp", "import", str(tmp_path / "missing.json"), "--yes"]) == 2
    assert main(["mcp", "import", str(_write(tmp_path, {"mcpServers": {"x": {}}})), "--yes"]) == 1
    assert main(["mcp", "import", str(_write(tmp_path, CLAUDE)), "--yes", "--secret", "NOPE"]) == 2
    assert [s.name for s in SettingsStore.open().settings.mcp_servers] == ["mine"]


def test_without_a_keyring_nothing_is_imported(tmp_path: Path, no_keyring: Any, capsys: Any) -> None:
    """A secret kept only for this process would be lost on exit: refuse, say how, change nothing."""
    assert main(["mcp", "import", str(_write(tmp_path, CLAUDE)), "--yes"]) == 1
    assert "no usable keyring" in capsys.readouterr().err
    assert SettingsStore.open().settings.mcp_servers == []
    assert (
        main(["mcp", "import", str(_write(tmp_path, CLAUDE)), "--yes", "--plain", "GITHUB_PERSONAL_ACCESS_TOKEN"]) == 0
    )
    assert len(SettingsStore.open().settings.mcp_servers) == 2


def test_stdin_without_yes_is_refused(tmp_path: Path, memory_keyring: Any, capsys: Any, monkeypatch: Any) -> None:
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(CLAUDE)))
    assert main(["mcp", "import", "-"]) == 2
    assert "--yes" in capsys.readouterr().err and SettingsStore.open().settings.mcp_servers == []
