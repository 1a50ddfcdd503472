"""``weclaw tools``: every tool, its actions and risk, and whether it is available on this machine."""

from __future__ import annotations

import argparse
import json
from typing import Any

from weclaw_desktop import i18n
from weclaw_desktop.commands.common import manifest_or_exit
from weclaw_desktop.i18n import tr
from weclaw_desktop.secrets import SecretStore
from weclaw_desktop.settings import SettingsStore
from weclaw_desktop.toolkit.availability import AvailabilityContext
from weclaw_desktop.toolkit.diagnostics import Diagnostic, human_text
from weclaw_desktop.toolkit.exposure import ExposurePlanner
from weclaw_desktop.toolkit.policy import Policy
from weclaw_desktop.toolkit.registry import ToolRegistry


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("tools", help="list tools and their availability")
    p.add_argument("--tools", help="path of tools.json (default: the bundled one)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "--schema",
        action="store_true",
        help="print the OpenAI tool definitions of every enabled tool (MCP servers' too), as if every bridge were connected",
    )
    p.add_argument("--lang", choices=["en", "zh"], help="language of names and messages (default: the terminal's)")
    p.add_argument("--no-mcp", action="store_true", help="do not start the MCP servers of the settings")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.lang:
        i18n.set_language(args.lang)
    lang = i18n.language()
    manifest = manifest_or_exit(args.tools)
    registry = ToolRegistry(manifest)
    secrets = SecretStore()
    settings = SettingsStore.open().settings
    servers = [s for s in settings.mcp_servers if s.enabled]
    policy = settings.tools.policy
    if args.schema:
        # built-in tools, and (unless --no-mcp) the tools of the MCP servers that connect: what a model is sent
        def schemas() -> str:
            connected = [
                t for t in registry.tool_names() if not registry.is_dynamic(t) or not registry.live_diagnostics(t)
            ]
            return json.dumps(registry.function_defs(connected), ensure_ascii=False, indent=1)

        if servers and not args.no_mcp:
            from weclaw_desktop.mcp.cli import run_with_servers

            print(run_with_servers(registry, servers, schemas, secrets=secrets))
        else:
            print(schemas())
        return 0
    if servers and not args.no_mcp:
        # MCP servers are started for the listing, so their tools and failures show as they really are.
        from weclaw_desktop.mcp.cli import run_with_servers

        rows = run_with_servers(registry, servers, lambda: _rows(registry, secrets, policy, lang), secrets=secrets)
    else:
        rows = _rows(registry, secrets, policy, lang)
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=1))
        return 0
    width = max((len(r["name"]) for r in rows), default=4)
    for r in rows:
        state = tr("cli.tools.available") if r["available"] else tr("cli.tools.hidden")
        print(f"{r['name']:<{width}}  {state:<9}  {r['category']:<13} {r['display_name']}")
        actions = ", ".join(f"{a['action']}({tr('risk.' + a['risk'])})" for a in r["actions"])
        print(f"{'':<{width}}  {tr('cli.tools.actions', actions=actions)}")
        for d in r["diagnostics"]:
            why, hint = human_text(Diagnostic.model_validate(d))
            end, gap = (".", " ") if lang == "en" else ("。", "")
            print(f"{'':<{width}}  ! {d['code']}: {why.rstrip('.。')}{end}{gap + hint if hint else ''}")
    visible = sum(r["available"] for r in rows)
    print(tr("cli.tools.summary", n=len(rows), available=visible, hidden=len(rows) - visible))
    return 0


def _rows(registry: ToolRegistry, secrets: SecretStore, policy: Policy, lang: str) -> list[dict[str, Any]]:
    """One row per tool, from the exposure computation the app uses (with the user's tool policy)."""
    exposure = ExposurePlanner(
        registry, policy=lambda: policy, availability=lambda: AvailabilityContext(has_secret=secrets.has)
    )
    result = exposure.compute()
    rows: list[dict[str, Any]] = []
    for tool in registry.tool_names(include_disabled=True):
        spec = registry.spec(tool)
        rows.append(
            {
                "name": tool,
                "display_name": spec.display.name.get(lang),
                "category": spec.display.category,
                "actions": [
                    {"function": f"{tool}_{a}", "action": a, "risk": spec.risk_of(a).value} for a in spec.actions
                ],
                "risk": spec.risk.value,
                "available": tool in result.visible,
                "diagnostics": [d.model_dump(mode="json") for d in result.hidden.get(tool, [])],
            }
        )
    return rows
