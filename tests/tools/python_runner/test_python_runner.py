"""python_runner: separate interpreter, outputs folder, errors, timeout and Stop kill, no secrets, frozen path."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from tools.processes import gone_soon, process_gone, wait_for_file

from weclaw_desktop.toolkit import ToolContext, ToolStatus
from weclaw_desktop.tools import python_runner
from weclaw_desktop.tools.python_runner import PythonRunnerTool, RunParams

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.asyncio
async def test_run_prints_and_produces_files(run, outputs: Path) -> None:
    code = "import sys\nprint(2 ** 10, '你好')\nopen('result.csv', 'w').write('a,b\\n1,2\\n')\nprint(sys.argv[1:])"
    res = await run("python_runner_run", code=code, args=["x", "y"])
    assert res.succeeded, res.output
    assert "--- stdout ---\n1024 你好\n['x', 'y']" in res.output
    assert res.data["exit_code"] == 0
    assert res.files == [str(outputs / "result.csv")]
    assert (outputs / "result.csv").read_text() == "a,b\n1,2\n"


@pytest.mark.asyncio
async def test_exception_is_a_failure_with_traceback(run) -> None:
    res = await run("python_runner_run", code="x = 1\ny = x / 0\n")
    assert res.status is ToolStatus.ERROR and res.data["exit_code"] == 1
    assert "ZeroDivisionError" in res.output and "fix the code" in res.output


@pytest.mark.asyncio
async def test_bad_inputs(run, home: Path, tmp_path: Path) -> None:
    syntax = await run("python_runner_run", code="def f(:\n  pass")
    assert "syntax error at line 1" in syntax.output
    assert "Invalid arguments" in (await run("python_runner_run", code="")).output
    assert "Invalid arguments" in (await run("python_runner_run", code="print(1)", timeout_s=-1)).output
    assert "outside" in (await run("python_runner_run", code="print(1)", cwd=str(tmp_path))).output
    assert "does not exist" in (await run("python_runner_run", code="print(1)", cwd="nowhere")).output


@pytest.mark.asyncio
async def test_cwd_in_home(run, home: Path) -> None:
    (home / "data").mkdir()
    (home / "data" / "n.txt").write_text("41")
    res = await run("python_runner_run", code="print(int(open('n.txt').read()) + 1)", cwd="data")
    assert "--- stdout ---\n42" in res.output


@pytest.mark.asyncio
async def test_timeout_kills_script_and_children(ctx: ToolContext, outputs: Path) -> None:
    code = (
        "import subprocess, sys, time\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "open('child.pid', 'w').write(str(p.pid))\n"
        "print('started', flush=True)\n"
        "time.sleep(60)\n"
    )
    res = await PythonRunnerTool().run(RunParams(code=code, timeout_s=2), ctx)
    assert res.status is ToolStatus.TIMEOUT and "started" in res.output
    assert await gone_soon(int((outputs / "child.pid").read_text()))


@pytest.mark.asyncio
async def test_cancel_kills_script_and_children(ctx: ToolContext, outputs: Path) -> None:
    code = (
        "import os, subprocess, sys, time\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "open('pids.txt', 'w').write(f'{os.getpid()} {p.pid}')\n"
        "time.sleep(60)\n"
    )
    task = asyncio.create_task(PythonRunnerTool().run(RunParams(code=code, timeout_s=60), ctx))
    pids = [int(p) for p in (await wait_for_file(outputs / "pids.txt")).split()]
    assert not any(process_gone(p) for p in pids)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert all([await gone_soon(p) for p in pids])


@pytest.mark.asyncio
async def test_secrets_absent_from_child_environment(run, secret_env: str) -> None:
    code = "import os\nfor k, v in sorted(os.environ.items()):\n    print(f'{k}={v}')\n"
    res = await run("python_runner_run", code=code)
    assert res.succeeded and "WECLAW_VISIBLE=visible-value" in res.output
    for needle in ("WECLAW_API_KEY", "OPENAI_API_KEY", "sk-weclaw-test", "MY_SERVICE_TOKEN", secret_env):
        assert needle not in res.output


def test_interpreter_argv_when_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    assert python_runner.interpreter_argv() == [sys.executable]
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", "/opt/WeClaw/weclaw")
    assert python_runner.interpreter_argv() == ["/opt/WeClaw/weclaw", "--run-python"]


def test_run_python_flag_the_way_the_bundle_calls_it(tmp_path: Path) -> None:
    script = tmp_path / "s.py"
    script.write_text(
        "import sys\nprint('名字', __name__, sys.argv[1:])\nraise SystemExit(sys.argv[1] == 'fail' and 3 or 0)\n"
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "PYTHONIOENCODING": "utf-8"}
    base = [sys.executable, "-m", "weclaw_desktop", "--run-python", str(script)]
    ok = subprocess.run([*base, "a", "b"], capture_output=True, env=env, cwd=tmp_path, timeout=60)
    assert ok.returncode == 0 and ok.stdout.decode("utf-8").strip() == "名字 __main__ ['a', 'b']"
    failed = subprocess.run([*base, "fail"], capture_output=True, env=env, cwd=tmp_path, timeout=60)
    assert failed.returncode == 3
    crash = tmp_path / "crash.py"
    crash.write_text("def f():\n    raise ValueError('bad value')\nf()\n")
    boom = subprocess.run([*base[:-1], str(crash)], capture_output=True, env=env, cwd=tmp_path, timeout=60)
    err = boom.stderr.decode()
    assert boom.returncode == 1 and "ValueError: bad value" in err and "runpy" not in err


@pytest.mark.asyncio
async def test_tool_through_the_frozen_entry_point(run, outputs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole tool with the child started as `<app> --run-python file` (the app is `python -m weclaw_desktop`)."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setattr(
        python_runner, "interpreter_argv", lambda: [sys.executable, "-m", "weclaw_desktop", "--run-python"]
    )
    res = await run("python_runner_run", code="import sys\nprint('frozen ok', sys.argv[1:])", args=["1"])
    assert res.succeeded, res.output
    assert "frozen ok ['1']" in res.output
