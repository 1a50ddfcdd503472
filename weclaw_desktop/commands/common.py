"""Helpers shared by subcommands: load tools.json with a readable error."""

from __future__ import annotations

import sys
from pathlib import Path

from weclaw_desktop.i18n import tr
from weclaw_desktop.paths import tools_json_path
from weclaw_desktop.toolkit.manifest import Manifest, ManifestError, load_manifest


def manifest_or_exit(path: str | None) -> Manifest:
    try:
        return load_manifest(Path(path) if path else tools_json_path())
    except ManifestError as exc:
        print(tr("cli.error", message=exc), file=sys.stderr)
        raise SystemExit(1) from None
