"""``weclaw validate``: tools.json and the code agree."""

from __future__ import annotations

import argparse
from typing import Any

from weclaw_desktop.paths import tools_json_path
from weclaw_desktop.toolkit.validator import Level, validate_path


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("validate", help="check tools.json against the tool code")
    p.add_argument("--tools", help="path of tools.json (default: the bundled one)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    path = args.tools or tools_json_path()
    report = validate_path(path)
    print(f"validating {path}")
    for line in report.lines():
        print(line)
    fails = sum(c.level is Level.FAIL for c in report.checks)
    warns = sum(c.level is Level.WARN for c in report.checks)
    print(f"{len(report.checks)} checks: {fails} failed, {warns} with warnings")
    return 0 if report.ok else 1
