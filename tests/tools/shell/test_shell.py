"""The shell tool: output, exit code, cwd, caps, timeout and Stop kill the whole tree, no secrets."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest
from tools.processes import gone_soon, process_gone, wait_for_file

from weclaw_desktop.toolkit import ToolContext, ToolStatus
from weclaw_desktop.tools.shell import RunParams, ShellConfig, ShellTool

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell syntax in these tests"),
]


async def test_run_through_dispatcher(run, home: Path, rhome: Path) -> None:
    res = await run("shell_run", command="echo hello; echo 中文; echo oops >&2; pwd; exit 3")
    assert res.succeeded, res.output
    assert res.data["exit_code"] == 3 and res.data["timed_out"] is False
    assert "--- stdout ---\nhello\n中文\n" + str(rhome) in res.output
    assert "--- stderr ---\noops" in res.output
    assert "exit code 3" in res.output


async def test_cwd_and_produced_files(run, home: Path, rhome: Path) -> None:
    (home / "work").mkdir()
    res = await run("shell_run", command="pwd; echo data > made.txt", cwd="work")
    assert res.output.count(str(rhome / "work")) >= 2
    assert res.files == [str(rhome / "work" / "made.txt")]


async def test_bad_inputs(run, home: Path, tmp_path: Path) -> None:
    (home / "f.txt").write_text("x")
    assert "Invalid arguments" in (await run("shell_run", command="")).output
    assert "Invalid arguments" in (await run("shell_run", command="echo", timeout_s=0)).output
    assert "does not exist" in (await run("shell_run", command="echo", cwd="missing")).output
    assert "cwd must be a folder" in (await run("shell_run", command="echo", cwd="f.txt")).output
    assert "outside" in (await run("shell_run", command="echo", cwd=str(tmp_path))).output
    (home / ".ssh").mkdir()
    assert "refused" in (await run("shell_run", command="ls", cwd="~/.ssh")).output


async def test_output_cap_keeps_head_and_tail(ctx: ToolContext) -> None:
    tool = ShellTool(ShellConfig(output_limit=3000))
    res = await tool.run(RunParams(command="seq 1 100000"), ctx)
    assert res.truncated and res.data["truncated"] is True
    out = res.output.split("--- stdout ---\n", 1)[1]
    assert out.startswith("1\n2\n3\n") and out.endswith("99999\n100000")
    assert "bytes omitted" in out and len(out) < 4000


async def test_timeout_kills_the_whole_tree(ctx: ToolContext, home: Path) -> None:
    tool = ShellTool()
    started = time.monotonic()
    res = await tool.run(
        RunParams(command="sleep 60 & echo $! > child.pid; echo $$ > shell.pid; wait", timeout_s=1), ctx
    )
    assert time.monotonic() - started < 10
    assert res.status is ToolStatus.TIMEOUT and res.data["timed_out"] is True
    assert "timeout" in res.output
    for name in ("child.pid", "shell.pid"):
        pid = int((home / name).read_text())
        assert await gone_soon(pid), f"{name} {pid} still runs"


async def test_cancel_kills_the_whole_tree(ctx: ToolContext, home: Path) -> None:
    tool = ShellTool()
    task = asyncio.create_task(
        tool.run(RunParams(command="sleep 60 & echo $! > child.pid; echo $$ > shell.pid; wait", timeout_s=60), ctx)
    )
    child = int(await wait_for_file(home / "child.pid"))
    shell = int(await wait_for_file(home / "shell.pid"))
    assert not process_gone(child)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await gone_soon(child) and await gone_soon(shell)


async def test_leftover_background_process_does_not_hang(ctx: ToolContext, home: Path) -> None:
    tool = ShellTool()
    started = time.monotonic()
    res = await tool.run(RunParams(command="sleep 60 & echo $! > bg.pid; echo started", timeout_s=30), ctx)
    assert time.monotonic() - started < 10
    assert res.data["exit_code"] == 0 and "started" in res.output
    assert "background processes" in res.output
    assert await gone_soon(int((home / "bg.pid").read_text()))


async def test_secrets_absent_from_child_environment(run, secret_env: str) -> None:
    res = await run("shell_run", command="env")
    assert res.succeeded
    assert "WECLAW_VISIBLE=visible-value" in res.output  # the environment is passed on...
    for needle in (
        "WECLAW_API_KEY",
        "OPENAI_API_KEY",
        "sk-weclaw-test",
        "sk-openai-test",
        "MY_SERVICE_TOKEN",
        secret_env,
    ):
        assert needle not in res.output  # ...without secrets


async def test_progress_reported_while_running(run) -> None:
    res = await run("shell_run", command="echo first; sleep 1.3; echo second")
    assert res.succeeded
    assert any(m.startswith("running 1 s: first") for _, m in run.progress)
