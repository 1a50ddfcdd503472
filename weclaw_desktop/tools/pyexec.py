"""Run a Python file as ``__main__`` inside the app's own interpreter (``weclaw --run-python FILE ARGS``).

In the PyInstaller bundle ``sys.executable`` is the WeClaw app, not a Python interpreter, so python_runner
starts ``<app> --run-python snippet.py``; cli.main() hands that to :func:`run_file` before anything else.
Kept free of heavy imports so the snippet starts fast.
"""

from __future__ import annotations

import os
import runpy
import sys
import traceback
from collections.abc import Sequence

FLAG = "--run-python"


def run_file(args: Sequence[str]) -> int:
    """Run ``args[0]`` with ``sys.argv = args``; return its exit code (1 and a traceback on an exception)."""
    if not args:
        print(f"usage: weclaw {FLAG} FILE [ARGS...]", file=sys.stderr)
        return 2
    _ensure_stdio()
    path = os.path.abspath(args[0])
    sys.argv = [path, *args[1:]]
    sys.path.insert(0, os.path.dirname(path))
    try:
        runpy.run_path(path, run_name="__main__")
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
        # hide the runner's own frames: show the traceback from the snippet down
        while tb is not None and tb.tb_frame.f_code.co_filename != path:
            tb = tb.tb_next
        traceback.print_exception(etype, value, tb)
        return 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    return 0


def _ensure_stdio() -> None:
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


def _windows_std_fd(which: int) -> int:
    """A C file descriptor for the inherited STD_OUTPUT/ERROR handle (a windowed exe has none by default)."""
    import ctypes
    import msvcrt

    handle = ctypes.windll.kernel32.GetStdHandle(which)  # type: ignore[attr-defined,unused-ignore]
    if handle in (0, -1, None):
        raise OSError("no standard handle")
    return int(msvcrt.open_osfhandle(handle, 0))  # type: ignore[attr-defined,unused-ignore]
