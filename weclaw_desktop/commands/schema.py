"""``weclaw schema``: print or write the JSON Schema of tools.json."""

from __future__ import annotations

import argparse
from typing import Any

from weclaw_desktop.paths import resource_path
from weclaw_desktop.toolkit.manifest import render_manifest_schema


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("schema", help="print the JSON Schema of tools.json")
    p.add_argument("--write", action="store_true", help="write it to resources/schema/tools.schema.json")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    text = render_manifest_schema()
    if args.write:
        target = resource_path("schema", "tools.schema.json")
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target}")
    else:
        print(text, end="")
    return 0
