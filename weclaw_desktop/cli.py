"""The ``weclaw`` command. With no subcommand it starts the desktop app.

Each subcommand lives in ``weclaw_desktop/commands/<name>.py`` with ``register(subparsers)``; this module
only wires them up, so adding a command never touches the others.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from weclaw_desktop import __version__, i18n

COMMANDS = ["validate", "tools", "schema", "intent", "chat", "doctor", "models", "phone", "mcp", "export"]
#: Subcommand names that are not a module of their own (``commands/export.py`` also registers ``import``).
ALSO = ["import"]
#: weclaw's own top-level options (anything else starting with "-" may be a Python command line).
OWN_OPTIONS = ("-h", "--help", "--version", "--data-dir", "--self-test")


def start_without_secrets() -> None:
    """First thing in a new process (before Qt or any preflight): re-exec without secret variables in the
    initial environment, then take them from the pipe (``secrets.reexec_without_secrets``)."""
    from weclaw_desktop.secrets import receive_env_secrets, reexec_without_secrets

    reexec_without_secrets()
    receive_env_secrets()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="weclaw", description="WeClaw Desktop: an AI assistant that does things.")
    parser.add_argument("--version", action="version", version=f"weclaw {__version__}")
    parser.add_argument("--data-dir", help="keep all user data under this folder (same as WECLAW_HOME)")
    parser.add_argument("--self-test", action="store_true", help="check that the app can start, then exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"weclaw_desktop.commands.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:  # started as a program (not called by a test): no secret in the initial environment
        start_without_secrets()
    raw = list(sys.argv[1:] if argv is None else argv)
    if raw[:1] == ["--child-guard"]:  # the supervisor of a tool's command in the frozen app (tools/lifetime.py)
        from weclaw_desktop.frozen import adopt_child_environ
        from weclaw_desktop.tools.childguard import main as child_guard

        adopt_child_environ()  # the command it runs gets the user's environment, Qt variables included

        return child_guard(raw[1:])
    if raw and ((raw[0].startswith("-") and raw[0] not in OWN_OPTIONS) or os.path.isfile(raw[0])):
        # A Python command line (--run-python FILE, -c CODE, -m MODULE, FILE): python_runner in the bundle,
        # where sys.executable is WeClaw itself, and whatever the snippet starts with sys.executable.
        from weclaw_desktop.tools.pyexec import python_main

        code = python_main(raw, [*COMMANDS, *ALSO])
        if code is not None:
            return code
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(encoding="utf-8", errors="replace")
    # messages for people follow the terminal's locale (LANGUAGE, LC_ALL, LC_MESSAGES, LANG; the Windows
    # display language); the desktop app then switches to the language of its settings
    i18n.set_language(i18n.resolve_language("system"))
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.data_dir:
        os.environ["WECLAW_HOME"] = os.path.abspath(args.data_dir)
    if args.self_test:
        from weclaw_desktop.ui.selftest import run_self_test

        return int(run_self_test())
    if args.command is None:
        from weclaw_desktop.preflight import cjk_warning, gui_problem
        from weclaw_desktop.preflight.messages import language

        problem = gui_problem()  # before PySide6 is imported: a bare machine gets a message, not an abort
        if problem is not None:
            print(problem.text, file=sys.stderr)
            return 1
        note = cjk_warning(language())
        if note:
            print(f"weclaw: {note}", file=sys.stderr)
        from weclaw_desktop.app import main as app_main

        return int(app_main())
    from weclaw_desktop.storage.faults import StorageError

    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        print(i18n.tr("cli.interrupted"), file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except StorageError as exc:  # any command: a damaged, locked or full database is one line, not a traceback
        print(i18n.tr("cli.error", message=exc.message), file=sys.stderr)
        return 1
