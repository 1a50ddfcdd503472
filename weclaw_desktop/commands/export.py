"""``weclaw export SESSION --format md|html|json [-o FILE]`` and ``weclaw import FILE``: a chat out and back in.

``SESSION`` is a chat id (``weclaw chat`` prints it; ``latest`` = the most recent chat). Without ``-o`` the
export is written to stdout. Import makes a new chat from a JSON export and prints its id."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from weclaw_desktop.i18n import tr

FORMATS = ("md", "html", "json")


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("export", help="write a chat as Markdown, HTML or JSON")
    p.add_argument("session", metavar="SESSION", help="chat id, or 'latest'")
    p.add_argument("--format", choices=FORMATS, default="md", help="md (default), html or json (importable)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(run=run_export)
    q: argparse.ArgumentParser = sub.add_parser("import", help="add a chat from a JSON export")
    q.add_argument("file", metavar="FILE", help="a file written by 'weclaw export --format json'")
    q.set_defaults(run=run_import)


def _fail(message: str, code: int = 1) -> int:
    print(tr("cli.error", message=message), file=sys.stderr)
    return code


def _history() -> Any:
    from weclaw_desktop.agent.history import HistoryStore
    from weclaw_desktop.paths import app_paths
    from weclaw_desktop.tools._db import shared_database

    paths = app_paths().ensure()
    return HistoryStore(shared_database(paths.database)), paths


def run_export(args: argparse.Namespace) -> int:
    return asyncio.run(_export(args))


async def _export(args: argparse.Namespace) -> int:
    from weclaw_desktop.agent.export import export_html, export_json, export_markdown

    history, _paths = _history()
    try:
        session = args.session
        if session == "latest":
            latest = await history.latest_session()
            if latest is None:
                return _fail(tr("cli.export.none"), 2)
            session = latest.id
        try:
            if args.format == "json":
                text = json.dumps(await export_json(history, session), ensure_ascii=False, indent=1) + "\n"
            elif args.format == "html":
                text = await export_html(history, session)
            else:
                text = await export_markdown(history, session)
        except KeyError:
            return _fail(tr("cli.chat.no_session", id=session), 2)
    finally:
        history.db.close()
    if args.output:
        target = await asyncio.to_thread(_write, Path(args.output), text)
        print(tr("cli.export.written", path=str(target)), file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _write(path: Path, text: str) -> Path:
    """Written whole or not at all (a half-written export never replaces an earlier one)."""
    target = path.expanduser()
    tmp = target.with_name(target.name + ".part")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, target)
    return target


def run_import(args: argparse.Namespace) -> int:
    return asyncio.run(_import(args))


async def _import(args: argparse.Namespace) -> int:
    from weclaw_desktop.agent.export.dump import ChatImportError, import_json, read_document

    history, paths = _history()
    try:
        doc = await asyncio.to_thread(read_document, Path(args.file))
        session = await import_json(history, doc, image_dir=paths.data / "attachments")
    except ChatImportError as exc:
        return _fail(str(exc), 2)
    finally:
        history.db.close()
    print(session)
    print(tr("cli.import.done", id=session), file=sys.stderr)
    return 0
