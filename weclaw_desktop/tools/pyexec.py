"""The app as a Python interpreter: ``weclaw --run-python FILE``, ``weclaw -c CODE``, ``-m MODULE``, ``FILE``, ``-``.

In the PyInstaller bundle ``sys.executable`` is the WeClaw app, not a Python interpreter. python_runner
starts ``<app> --run-python snippet.py``, and code in the snippet that starts ``sys.executable`` the way
programs start Python (``[sys.executable, "-c", code]``, ``-m json.tool``, a helper script) gets the same
behaviour as from ``python``: :func:`python_main` recognises such a command line and runs it; cli.main()
hands it over before anything else. multiprocessing's workers and resource tracker are handled earlier by
``freeze_support()`` (``weclaw_desktop.frozen.startup``). Kept free of heavy imports so a snippet starts fast.
"""

from __future__ import annotations

import os
import runpy
import sys
import traceback
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

FLAG = "--run-python"
#: Interpreter options that take no value and that the app accepts (and mostly ignores: the bundle's
#: interpreter is already configured). -h and -V stay weclaw's own --help/--version.
NO_VALUE_FLAGS = frozenset("bBdEiIOqsSuvx")
VALUE_FLAGS = frozenset("WX")


@dataclass
class Invocation:
    """A Python command line: what to run (``code``/``module``/``file``/``stdin``) and how."""

    kind: str
    target: str
    args: list[str] = field(default_factory=list)
    unbuffered: bool = False
    warnoptions: list[str] = field(default_factory=list)
    no_bytecode: bool = False


def parse_python_args(argv: Sequence[str], commands: Sequence[str] = ()) -> Invocation | None:
    """``argv`` (without the program name) as a Python command line, or None if it is a weclaw one.

    ``commands`` are weclaw's subcommand names: ``weclaw chat`` is never a script called ``chat``.
    """
    args = list(argv)
    if not args:
        return None
    if args[0] == FLAG:
        return Invocation("file", args[1], args[2:]) if len(args) > 1 else Invocation("usage", "")
    inv = Invocation("", "")
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-":
            inv.kind, inv.target, inv.args = "stdin", "-", args[i + 1 :]
            return inv
        if not arg.startswith("-") or arg.startswith("--"):
            break
        letters = arg[1:]
        for j, letter in enumerate(letters):
            rest = letters[j + 1 :]
            if letter in ("c", "m"):
                value = rest or (args[i + 1] if i + 1 < len(args) else None)
                if value is None:
                    return None
                after = i + 1 if rest else i + 2
                inv.kind, inv.target, inv.args = ("code" if letter == "c" else "module"), value, args[after:]
                return inv
            if letter in VALUE_FLAGS:
                value = rest or (args[i + 1] if i + 1 < len(args) else None)
                if value is None:
                    return None
                if letter == "W":
                    inv.warnoptions.append(value)
                if not rest:
                    i += 1
                break
            if letter not in NO_VALUE_FLAGS:
                return None  # a weclaw option (-h, --data-dir ...)
            inv.unbuffered |= letter == "u"
            inv.no_bytecode |= letter == "B"
        i += 1
    if i >= len(args) or args[i].startswith("-"):
        return None
    target = args[i]
    if i == 0 and (target in commands or not os.path.isfile(target)):
        return None  # a weclaw command (or a typo argparse will name)
    inv.kind, inv.target, inv.args = "file", target, args[i + 1 :]
    return inv


def python_main(argv: Sequence[str], commands: Sequence[str] = ()) -> int | None:
    """Run ``argv`` like ``python`` would and return the exit code; None if it is not a Python command line."""
    inv = parse_python_args(argv, commands)
    if inv is None:
        return None
    if inv.kind == "usage":
        print(f"usage: weclaw {FLAG} FILE [ARGS...]", file=sys.stderr)
        return 2
    _ensure_stdio(unbuffered=inv.unbuffered)
    if inv.no_bytecode:
        sys.dont_write_bytecode = True
    if inv.warnoptions:
        import warnings

        for option in inv.warnoptions:
            try:
                warnings._setoption(option)  # type: ignore[attr-defined]  # what -W does
            except Exception as exc:
                print(f"Invalid -W option ignored: {exc}", file=sys.stderr)
    if inv.kind == "file":
        path = os.path.abspath(inv.target)
        if not os.path.isfile(path):
            print(f"weclaw: can't open file {inv.target!r}: no such file", file=sys.stderr)
            return 2
        sys.argv = [path, *inv.args]
        sys.path.insert(0, os.path.dirname(path))
        return _run(lambda: runpy.run_path(path, run_name="__main__"), path)
    if inv.kind == "module":
        sys.argv = [inv.target, *inv.args]
        sys.path.insert(0, os.getcwd())
        return _run(lambda: runpy.run_module(inv.target, run_name="__main__", alter_sys=True), None)
    if inv.kind == "stdin":
        code, name, argv0 = sys.stdin.read(), "<stdin>", "-"
    else:
        code, name, argv0 = inv.target, "<string>", "-c"
    sys.argv = [argv0, *inv.args]
    sys.path.insert(0, "")
    return _run(lambda: _exec_main(code, name), name)


def run_file(args: Sequence[str]) -> int:
    """Run ``args[0]`` with ``sys.argv = args``; return its exit code (1 and a traceback on an exception)."""
    code = python_main([FLAG, *args])
    return 2 if code is None else code


def _exec_main(code: str, filename: str) -> None:
    import builtins

    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    exec(compile(code, filename, "exec"), main.__dict__)


def _run(body: Callable[[], object], shown_from: str | None) -> int:
    """Run ``body`` as Python runs a script: SystemExit is the exit code, an exception a traceback and 1."""
    try:
        body()
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    except BaseException:
        etype, value, tb = sys.exc_info()
        if shown_from is not None:  # hide the runner's own frames: show the traceback from the snippet down
            first = tb
            while tb is not None and tb.tb_frame.f_code.co_filename != shown_from:
                tb = tb.tb_next
            tb = tb or first
        traceback.print_exception(etype, value, tb)
        return 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None and not stream.closed:  # json.tool closes stdout
                stream.flush()
    return 0


def _ensure_stdio(*, unbuffered: bool = False) -> None:
    """UTF-8 stdout/stderr; a windowed (no console) build starts with them None, so reopen fds 1 and 2."""
    for name, fd in (("stdout", 1), ("stderr", 2)):
        stream = getattr(sys, name)
        if stream is None:
            try:
                if os.name == "nt":
                    fd = _windows_std_fd(-11 if fd == 1 else -12)
                setattr(sys, name, open(fd, "w", encoding="utf-8", errors="backslashreplace", closefd=False))  # noqa: SIM115
            except OSError:
                continue
        else:
            reconfigure = getattr(stream, "reconfigure", None)
            if reconfigure is not None:
                reconfigure(encoding="utf-8", errors="backslashreplace")
                if unbuffered:
                    reconfigure(write_through=True)


def _windows_std_fd(which: int) -> int:
    """A C file descriptor for the inherited STD_OUTPUT/ERROR handle (a windowed exe has none by default)."""
    import ctypes
    import msvcrt

    handle = ctypes.windll.kernel32.GetStdHandle(which)  # type: ignore[attr-defined,unused-ignore]
    if handle in (0, -1, None):
        raise OSError("no standard handle")
    return int(msvcrt.open_osfhandle(handle, 0))  # type: ignore[attr-defined,unused-ignore]
