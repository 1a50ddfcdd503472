"""``weclaw models``: the provider presets, and the models an endpoint offers (from its ``/models``)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from weclaw_desktop.i18n import tr


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("models", help="list provider presets or an endpoint's models")
    p.add_argument("--presets", action="store_true", help="list the built-in provider presets")
    p.add_argument("--preset", help="use this preset's base URL (see --presets)")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint (default: the configured one)")
    p.add_argument("--api-key-env", metavar="NAME", help="read the API key from this environment variable")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from weclaw_desktop.agent.presets import PRESETS

    if args.presets:
        rows = [
            {"key": p.key, "label": p.label, "base_url": p.base_url, "default_model": p.default_model}
            for p in PRESETS.values()
        ]
        if args.json:
            print(json.dumps(rows, ensure_ascii=False, indent=1))
        else:
            for r in rows:
                print(f"{r['key']:<12} {r['base_url'] or tr('cli.models.your_url'):<52} {r['label']}")
        return 0
    if args.preset and args.preset not in PRESETS:
        print(
            tr("cli.error", message=tr("cli.models.unknown_preset", preset=args.preset, presets=", ".join(PRESETS))),
            file=sys.stderr,
        )
        return 2
    return asyncio.run(_list(args))


async def _list(args: argparse.Namespace) -> int:
    from weclaw_desktop.agent.presets import get_preset
    from weclaw_desktop.agent.provider import Provider, ProviderConfig, ProviderError
    from weclaw_desktop.secrets import API_KEY_ENV, SecretStore, take_env_secrets
    from weclaw_desktop.settings import SettingsStore

    settings = SettingsStore.open().settings
    env_keys = take_env_secrets((args.api_key_env,) if args.api_key_env else ())
    preset = args.preset or ("" if args.base_url else settings.provider.preset)
    base_url = args.base_url or (get_preset(preset).base_url if args.preset else settings.provider.base_url)
    if not base_url:
        print(tr("cli.error", message=tr("cli.models.no_endpoint")), file=sys.stderr)
        return 2
    key = env_keys.get(args.api_key_env or "") or SecretStore().get(settings.provider.api_key_name)
    key = key or next((env_keys[e] for e in API_KEY_ENV if e in env_keys), None)
    provider = Provider(ProviderConfig(base_url=base_url, model="", api_key=key, preset=preset, max_retries=1))
    try:
        models = await provider.list_models()
    except ProviderError as exc:
        print(tr("cli.error", message=exc.message), file=sys.stderr)
        return 1
    finally:
        await provider.close()
    print(json.dumps(models, ensure_ascii=False) if args.json else "\n".join(models))
    return 0
