"""``weclaw mcp``: the MCP servers of the settings — list them, import the ecosystem's JSON, export it.

    weclaw mcp list [--connect] [--json]        the servers (and, with --connect, their state and tools)
    weclaw mcp import FILE|- [--yes] [--replace] [--secret NAME] [--plain NAME] [--dry-run] [--json]
    weclaw mcp export [FILE] [--include-secrets]

Import reads claude_desktop_config.json, Cursor's mcp.json, VS Code's mcp.json, Cline's settings (or the
same pasted on stdin), shows what it will add — and which env values and headers go to the keyring —
and adds them through the settings store after a yes (``--yes`` for scripts). ``--secret`` / ``--plain``
overrule the guess for a value name. Nothing is written with ``--dry-run``, or when anything is unclear.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from weclaw_desktop.i18n import tr
from weclaw_desktop.mcp.importer import (
    ConfigImportError,
    ImportPlan,
    apply_plan,
    export_config,
    omitted_secrets,
    parse_config,
    store_secrets,
)
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import McpServerSettings, Settings, SettingsStore


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("mcp", help="list, import and export MCP servers")
    actions = p.add_subparsers(dest="mcp_command", metavar="ACTION", required=True)
    ls = actions.add_parser("list", help="the MCP servers of the settings")
    ls.add_argument("--connect", action="store_true", help="start each enabled server and show its state and tools")
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    ls.set_defaults(run=run_list)
    imp = actions.add_parser("import", help="add servers from an mcpServers JSON file (claude_desktop_config.json ...)")
    imp.add_argument("file", help="the JSON file, or - for standard input")
    imp.add_argument("--yes", action="store_true", help="add them without asking")
    imp.add_argument("--replace", action="store_true", help="replace servers of the same name (default: rename)")
    imp.add_argument("--secret", action="append", default=[], metavar="NAME", help="keep this value in the keyring")
    imp.add_argument("--plain", action="append", default=[], metavar="NAME", help="this value is not a secret")
    imp.add_argument("--dry-run", action="store_true", help="show what would be added, change nothing")
    imp.add_argument("--json", action="store_true", help="machine-readable output")
    imp.set_defaults(run=run_import)
    exp = actions.add_parser("export", help="write the servers as mcpServers JSON")
    exp.add_argument("file", nargs="?", help="where to write it (default: standard output)")
    exp.add_argument("--include-secrets", action="store_true", help="write the secret values from the keyring too")
    exp.set_defaults(run=run_export)


def _err(text: str, code: int = 2) -> int:
    print(tr("cli.error", message=text), file=sys.stderr)
    return code


# --- list ---------------------------------------------------------------------------------------
def _row(s: McpServerSettings) -> dict[str, Any]:
    return {
        "name": s.name,
        "enabled": s.enabled,
        "transport": s.transport,
        "target": s.command + (" " + " ".join(s.args) if s.args else "") if s.transport == "stdio" else s.url,
        "trusted": s.trusted,
        "secrets": list(s.secret_env if s.transport == "stdio" else s.secret_headers),
        "auth": s.auth,
        "tool_approval": dict(s.tool_approval),
    }


def run_list(args: argparse.Namespace) -> int:
    store = SettingsStore.open()
    settings = store.settings
    rows = [_row(s) for s in settings.mcp_servers]
    for bad in settings.mcp_invalid:
        rows.insert(min(bad.index, len(rows)), {"name": bad.name, "invalid": True, "error": bad.error})
    if args.connect:
        _connect(settings, rows)
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=1))
        return 0
    if not rows:
        print(tr("cli.mcp.none"))
        return 0
    for r in rows:
        if r.get("invalid"):
            print(f"! {r['name'] or '?'}: {tr('cli.mcp.invalid', error=r['error'])}")
            continue
        flags = [tr("cli.mcp.off")] if not r["enabled"] else []
        flags += [tr("cli.mcp.trusted")] if r["trusted"] else []
        tail = f"  [{', '.join(flags)}]" if flags else ""
        print(f"{r['name']}  {r['transport']}  {r['target']}{tail}")
        if r["secrets"]:
            print(f"    {tr('cli.mcp.secrets', names=', '.join(r['secrets']))}")
        if "state" in r:
            print(f"    {r['state']}: {r['message']}")
            for fn, about in r.get("tools", []):
                print(f"      {fn}  {about[:80]}")
            for problem in r.get("problems", []):
                print(f"      ! {problem}")
    return 0


def _connect(settings: Settings, rows: list[dict[str, Any]]) -> None:
    """Start the enabled servers once (as ``weclaw tools`` does) and add their state and tools to ``rows``."""
    from weclaw_desktop.mcp.cli import run_with_servers
    from weclaw_desktop.mcp.manager import McpManager
    from weclaw_desktop.paths import tools_json_path
    from weclaw_desktop.toolkit.registry import ToolRegistry

    servers = [s for s in settings.mcp_servers if s.enabled]
    if not servers:
        return
    registry = ToolRegistry.from_path(tools_json_path())

    def collect(manager: McpManager) -> None:
        for row in rows:
            if row.get("invalid") or not row["enabled"]:
                continue
            status = manager.status(row["name"])
            row.update(state=status.state, message=status.message, tools=status.tools, problems=status.problems)

    run_with_servers(registry, servers, collect)


# --- import -------------------------------------------------------------------------------------
def _read(source: str) -> str:
    if source == "-":
        return sys.stdin.read()
    return Path(source).expanduser().read_text(encoding="utf-8-sig")


def _preview(plan: ImportPlan) -> list[str]:
    lines = [tr("cli.mcp.import.head", n=len(plan.servers), source=plan.source)]
    for server in plan.servers:
        s = server.settings
        target = " ".join([s.command, *s.args]) if s.transport == "stdio" else s.url
        verb = tr("cli.mcp.import.replace") if server.replaces else tr("cli.mcp.import.add")
        lines.append(f"  {verb} {s.name}  ({s.transport})  {target}")
        for v in server.values:
            where = tr("cli.mcp.import.keyring") if v.secret else tr("cli.mcp.import.plain")
            lines.append(f"      {v.kind} {v.name}: {where}")
        for note in server.notes:
            lines.append(f"      - {note}")
    for problem in plan.problems:
        lines.append(f"  ! {problem}")
    return lines


def _plan_json(plan: ImportPlan) -> dict[str, Any]:
    return {
        "servers": [
            {
                **_row(s.settings),
                "replaces": s.replaces,
                "values": [{"kind": v.kind, "name": v.name, "secret": v.secret} for v in s.values],
                "notes": s.notes,
            }
            for s in plan.servers
        ],
        "problems": plan.problems,
    }


def run_import(args: argparse.Namespace) -> int:
    try:
        text = _read(args.file)
    except OSError as exc:
        return _err(tr("cli.mcp.import.unreadable", path=args.file, reason=exc.strerror or str(exc)))
    except UnicodeDecodeError:
        return _err(tr("cli.mcp.import.not_text", path=args.file))
    store = SettingsStore.open()
    existing = [s.name for s in store.settings.mcp_servers] + [b.name for b in store.settings.mcp_invalid if b.name]
    try:
        plan = parse_config(text, existing=existing, replace=args.replace, source=args.file)
    except ConfigImportError as exc:
        return _err(tr("cli.mcp.import.bad", path=args.file, reason=str(exc)))
    for name in args.secret:
        if not any(s.set_secret(name, True) for s in plan.servers):
            return _err(tr("cli.mcp.import.no_value", name=name))
    for name in args.plain:
        if not any(s.set_secret(name, False) for s in plan.servers):
            return _err(tr("cli.mcp.import.no_value", name=name))
    if args.json:
        print(json.dumps(_plan_json(plan), ensure_ascii=False, indent=1))
    else:
        print("\n".join(_preview(plan)), file=sys.stderr)
    if not plan.servers:
        return _err(tr("cli.mcp.import.nothing"), 1)
    if args.dry_run:
        return 0
    if not args.yes:
        if not sys.stdin.isatty() or args.file == "-":
            return _err(tr("cli.mcp.import.confirm_needed"))
        answer = input(tr("cli.mcp.import.ask"))
        if answer.strip().lower() not in ("y", "yes", "是"):
            print(tr("cli.mcp.import.cancelled"), file=sys.stderr)
            return 1
    failed = store_secrets(plan, SecretStore())
    if failed:
        return _err(tr("cli.mcp.import.no_keyring", names=", ".join(failed)), 1)
    added: list[str] = []
    store.update(lambda s: added.extend(apply_plan(plan, s)))
    print(tr("cli.mcp.import.done", n=len(added), names=", ".join(added)), file=sys.stderr)
    return 0


# --- export -------------------------------------------------------------------------------------
def run_export(args: argparse.Namespace) -> int:
    servers = SettingsStore.open().settings.mcp_servers
    doc = export_config(servers, SecretStore() if args.include_secrets else None)
    text = json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
    if args.file:
        try:
            Path(args.file).expanduser().write_text(text, encoding="utf-8")
        except OSError as exc:
            return _err(tr("cli.mcp.export.unwritable", path=args.file, reason=exc.strerror or str(exc)))
        print(tr("cli.mcp.export.done", n=len(servers), path=args.file), file=sys.stderr)
    else:
        sys.stdout.write(text)
    left_out = [] if args.include_secrets else omitted_secrets(servers)
    if left_out:
        print(tr("cli.mcp.export.omitted", names=", ".join(left_out)), file=sys.stderr)
    return 0
