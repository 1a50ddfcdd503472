"""Self-test checks of what the bundle must give its children and its platform: a clean environment in a
child process, a complete standard library for python_runner, fonts and time zones. No Qt needed."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from weclaw_desktop.paths import AppPaths
from weclaw_desktop.selfcheck.report import CheckFailed
from weclaw_desktop.toolkit.base import ToolResult
from weclaw_desktop.toolkit.registry import ToolRegistry

MAPS_MARK = "@@maps@@"
#: Runs in the shell tool's child: its environment, then the files its bash has mapped (its libraries).
ENV_COMMAND_POSIX = (
    "bash -c 'env; echo " + MAPS_MARK + "; "
    'while read -r a b c d e f; do [ -n "$f" ] && echo "$f"; done < /proc/$$/maps 2>/dev/null; true\''
)
ENV_COMMAND_WINDOWS = 'Get-ChildItem Env: | ForEach-Object { "$($_.Name)=$($_.Value)" }'

#: What python_runner's snippets import in the self-test: the modules a bundle used to lack, and more.
STDLIB_SAMPLE = (
    "xml.etree.ElementTree", "xml.dom.minidom", "xml.sax", "html.parser", "email.mime.text", "email.mime.multipart",
    "unittest", "unittest.mock", "timeit", "cmath", "statistics", "fractions", "decimal", "sqlite3", "csv",
    "zipfile", "tarfile", "lzma", "bz2", "gzip", "hashlib", "hmac", "secrets", "uuid", "ctypes", "dbm", "shelve",
    "difflib", "textwrap", "pprint", "calendar", "zoneinfo", "http.server", "http.client", "urllib.request",
    "xmlrpc.client", "xmlrpc.server", "wsgiref.simple_server", "smtplib", "imaplib", "ftplib", "poplib", "mailbox",
    "configparser", "logging.handlers", "asyncio", "concurrent.futures", "multiprocessing.pool", "queue", "sched",
    "socketserver", "ipaddress", "pdb", "profile", "cProfile", "pstats", "trace", "tracemalloc", "doctest", "wave",
    "colorsys", "plistlib", "netrc", "mimetypes", "quopri", "filecmp", "fileinput", "tokenize", "dis", "symtable",
    "pickletools", "modulefinder", "importlib.resources", "zipapp", "compileall", "py_compile", "tomllib",
    "graphlib", "json.tool", "getpass", "webbrowser", "codeop", "venv", "stringprep",
)  # fmt: skip
POSIX_SAMPLE = (
    "curses",
    "readline",
    "rlcompleter",
    "grp",
    "pwd",
    "resource",
    "syslog",
    "termios",
    "tty",
    "pty",
    "fcntl",
)

STDLIB_SNIPPET = """
import importlib, json, subprocess, sys, warnings
import multiprocessing as mp

def square(x):
    return x * x

if __name__ == "__main__":
    warnings.simplefilter("ignore")
    missing = []
    for name in {modules!r}:
        try:
            importlib.import_module(name)
        except Exception as exc:
            missing.append(f"{{name}} ({{type(exc).__name__}}: {{exc}})")
    run = subprocess.run([sys.executable, "-c", "import sys; print(6 * 7, sys.argv[1:])", "x"],
                         capture_output=True, text=True, timeout=60)
    with mp.get_context("spawn").Pool(1) as pool:
        spawned = pool.map(square, [1, 2, 3], chunksize=1)
    print(json.dumps({{"missing": missing, "c": [run.returncode, run.stdout.strip(), run.stderr[-300:]],
                      "spawn": spawned, "count": {count}}}))
"""


def stdlib_snippet() -> str:
    modules = list(STDLIB_SAMPLE) + (list(POSIX_SAMPLE) if os.name == "posix" else [])
    return STDLIB_SNIPPET.format(modules=modules, count=len(modules))


async def _dispatch(registry: ToolRegistry, paths: AppPaths, tool: str, arguments: dict[str, object]) -> ToolResult:
    from weclaw_desktop.toolkit.approval import ApprovalPolicy
    from weclaw_desktop.toolkit.base import Origin, ToolContext
    from weclaw_desktop.toolkit.dispatcher import Dispatcher, ToolCall
    from weclaw_desktop.toolkit.exposure import NO_ROUND
    from weclaw_desktop.toolkit.registry import function_name

    function = function_name(tool, "run")
    # The self-test approves its own call, as a user would ("always allow" for this one function).
    dispatcher = Dispatcher(registry, approval_policy=ApprovalPolicy(remembered=[function]))
    ctx = ToolContext(origin=Origin.GUI, outputs_dir=paths.outputs, data_dir=paths.data, db=None)
    call = ToolCall(id=f"selftest-{tool}", name=function, arguments=json.dumps(arguments))
    # Not a model round (NO_ROUND) and no one to ask (gate None): the remembered approval lets it run.
    return (await dispatcher.dispatch(call, ctx, gate=None, offered=NO_ROUND)).result


def _stdout(result: ToolResult) -> str:
    return result.output.split("--- stdout ---\n", 1)[-1].split("\n--- stderr ---", 1)[0]


async def check_python_stdlib(registry: ToolRegistry, paths: AppPaths) -> str:
    """python_runner: the standard library imports, ``sys.executable -c`` works, a spawn Pool works."""
    paths.outputs.mkdir(parents=True, exist_ok=True)
    result = await _dispatch(registry, paths, "python_runner", {"code": stdlib_snippet(), "timeout_s": 120})
    out = _stdout(result).strip().splitlines()
    try:
        report = json.loads(out[-1])
    except (IndexError, ValueError):
        raise CheckFailed(f"python_runner: {result.status.value}: {result.output[-400:]}") from None
    problems = []
    if report["missing"]:
        problems.append(f"{len(report['missing'])} modules missing: {'; '.join(report['missing'][:8])}")
    code, text, err = report["c"]
    if code != 0 or text != "42 ['x']":
        problems.append(f"sys.executable -c gave exit {code} {text!r} {err!r}")
    if report["spawn"] != [1, 4, 9]:
        problems.append(f"multiprocessing spawn gave {report['spawn']!r}")
    if problems:
        raise CheckFailed("; ".join(problems))
    how = "the app with --run-python" if getattr(sys, "frozen", False) else "sys.executable"
    return f"{report['count']} stdlib modules import, sys.executable -c works, a spawn Pool works (via {how})"


async def check_child_env(registry: ToolRegistry, paths: AppPaths) -> str:
    """The shell tool's child sees the user's environment: nothing of PyInstaller's, no bundle library."""
    from weclaw_desktop.frozen import RESTORED, bundle_dirs

    paths.outputs.mkdir(parents=True, exist_ok=True)
    command = ENV_COMMAND_WINDOWS if os.name == "nt" else ENV_COMMAND_POSIX
    result = await _dispatch(registry, paths, "shell", {"command": command, "cwd": str(paths.outputs)})
    data = result.data if isinstance(result.data, dict) else {}
    if data.get("exit_code") != 0 or result.truncated:
        raise CheckFailed(f"shell: {result.status.value}: {result.output[-300:]}")
    env_text, _, maps_text = _stdout(result).partition(MAPS_MARK)
    env = dict(line.split("=", 1) for line in env_text.splitlines() if "=" in line)
    maps = {line.strip() for line in maps_text.splitlines() if line.strip().startswith("/")}
    bundle = bundle_dirs()
    problems = [f"{name} is set" for name in env if name.startswith("_PYI_") or name.endswith("_ORIG")]
    problems += [
        f"{name}={value[:80]} points into the bundle" for name, value in env.items() if any(b in value for b in bundle)
    ]
    problems += [f"bash loaded {path} from the bundle" for path in maps if any(path.startswith(b) for b in bundle)]
    for name, value in RESTORED.restored.items():
        if env.get(name) != value:
            problems.append(f"{name} is {env.get(name)!r}, not the user's {value!r}")
    if problems:
        raise CheckFailed("; ".join(problems[:6]))
    libs = sorted({Path(p).name for p in maps if ".so" in p})
    where = sorted({str(Path(p).parent) for p in maps if ".so" in p})
    if not bundle:
        return f"from source: {len(env)} variables; bash maps {', '.join(libs[:4])} from {', '.join(where)}"
    seen = ", ".join(f"{n}={env[n]}" if n in env else f"{n} unset" for n in ("LD_LIBRARY_PATH", "QT_PLUGIN_PATH"))
    return (
        f"bash in a child: no _PYI_*, nothing points into the bundle; it sees {seen}; the app dropped "
        f"{', '.join(sorted(set(RESTORED.removed))) or 'nothing'}; bash's libraries from {', '.join(where) or '?'}"
    )


def check_fonts() -> str:
    if not sys.platform.startswith("linux"):
        return "fonts come with the system (Windows/macOS)"
    from weclaw_desktop.preflight import font_problem
    from weclaw_desktop.preflight.fonts import font_report

    problem = font_problem()
    if problem is not None:
        raise CheckFailed(problem.text)
    report = font_report()
    cjk = report.cjk_families[0] if report.cjk_families else "none (Chinese shows as boxes: install fonts-noto-cjk)"
    return f"{report.count} fonts through fontconfig; Chinese: {cjk}"


def check_timezones() -> str:
    from weclaw_desktop.preflight.tz import zone_database

    db = zone_database()
    if db.source == "none":
        raise CheckFailed(db.text)
    from zoneinfo import ZoneInfo

    ZoneInfo("Asia/Shanghai")
    ZoneInfo("America/New_York")
    return db.text
