"""The app as a Python interpreter: what a snippet in the bundle gets when it starts ``sys.executable`` the
way programs start Python (``-c``, ``-m``, a script, stdin), with Python's exit codes and tracebacks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from weclaw_desktop.cli import COMMANDS
from weclaw_desktop.tools.pyexec import parse_python_args

ROOT = Path(__file__).resolve().parents[2]


def weclaw(*args: str, stdin: str | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "weclaw_desktop", *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_dash_c_runs_code_with_argv_and_exit_code() -> None:
    proc = weclaw("-c", "import sys; print(6 * 7, sys.argv); sys.exit(4)", "a", "b")
    assert proc.stdout.strip() == "42 ['-c', 'a', 'b']"
    assert proc.returncode == 4


def test_dash_c_traceback_shows_the_code_not_the_runner() -> None:
    proc = weclaw("-c", "1 / 0")
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == "ZeroDivisionError: division by zero"
    assert 'File "<string>", line 1' in proc.stderr and "pyexec" not in proc.stderr


def test_dash_m_runs_a_standard_module(tmp_path: Path) -> None:
    proc = weclaw("-m", "json.tool", stdin='{"b": 1}')
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["{", '"b":', "1", "}"]


def test_a_script_path_and_stdin(tmp_path: Path) -> None:
    script = tmp_path / "helper"  # no .py: programs write temp scripts with any name
    script.write_text("import sys\nprint('script', sys.argv[1:])\n", encoding="utf-8")
    assert weclaw(str(script), "x").stdout.strip() == "script ['x']"
    assert weclaw("-", "y", stdin="import sys; print('stdin', sys.argv)").stdout.strip() == "stdin ['-', 'y']"


def test_interpreter_flags_are_accepted() -> None:
    """multiprocessing and subprocess pass the interpreter's own flags (-I, -B, -E, -s, -u, -W, -X ...)."""
    proc = weclaw("-I", "-B", "-s", "-u", "-X", "utf8", "-W", "ignore", "-c", "print('flags ok')")
    assert proc.stdout.strip() == "flags ok", proc.stderr
    assert weclaw("-Ic", "print('cluster')").stdout.strip() == "cluster"


def test_weclaw_commands_and_options_stay_weclaws(tmp_path: Path) -> None:
    (tmp_path / "chat").write_text("print('never run')", encoding="utf-8")
    assert parse_python_args(["chat", "hello"], COMMANDS) is None  # even with a file called chat here
    assert parse_python_args(["--version"], COMMANDS) is None
    assert parse_python_args(["-h"], COMMANDS) is None
    assert parse_python_args(["--data-dir=x", "chat"], COMMANDS) is None
    assert weclaw("--version").stdout.startswith("weclaw ")
    proc = weclaw("nosuchcommand")
    assert proc.returncode == 2 and "invalid choice" in proc.stderr


def test_a_missing_script_is_a_message_not_a_traceback() -> None:
    proc = weclaw("-u", "/nonexistent/script.py")
    assert proc.returncode == 2
    assert "can't open file" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("argv", "kind", "target", "rest"),
    [
        (["-c", "x=1", "a"], "code", "x=1", ["a"]),
        (["-cx=1"], "code", "x=1", []),
        (["-m", "timeit", "-n", "1"], "module", "timeit", ["-n", "1"]),
        (["--run-python", "f.py", "a"], "file", "f.py", ["a"]),
        (["-W", "error", "-c", "pass"], "code", "pass", []),
    ],
)
def test_parse_python_args(argv: list[str], kind: str, target: str, rest: list[str]) -> None:
    inv = parse_python_args(argv, COMMANDS)
    assert inv is not None and (inv.kind, inv.target, inv.args) == (kind, target, rest)
