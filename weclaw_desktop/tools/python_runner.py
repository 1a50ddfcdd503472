"""The python_runner tool: run a Python snippet in a separate interpreter.

The snippet is written to a temp file and run by a separate process: ``sys.executable`` from a normal
install, or ``<app> --run-python file`` inside the PyInstaller bundle, where ``sys.executable`` is the
WeClaw app (cli.main() runs the file with runpy). It runs in the outputs folder (or a given folder), with
a timeout, an output cap, an environment without secrets, and is killed with its children on Stop.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.toolkit.argkinds import PathStr
from weclaw_desktop.toolkit.base import BaseTool, ToolContext, ToolError, ToolResult, action
from weclaw_desktop.tools.pathguard import RELATIVE_NOTE, PathGuard
from weclaw_desktop.tools.procrun import format_outcome, outcome_result, produced, run_process, snapshot
from weclaw_desktop.tools.pyexec import FLAG
from weclaw_desktop.tools.safe_env import safe_env


class PythonRunnerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_timeout_s: float = Field(
        290, gt=0, description="upper bound for a snippet's timeout; keep it below the tools.json timeout_s"
    )
    output_limit: int = Field(20_000, ge=1000, description="characters of output kept (head and tail)")
    max_code_chars: int = Field(200_000, ge=1000, description="longest snippet accepted")


class RunParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: str = Field(min_length=1, description="Python 3 source to run as a script. Print what you want to see.")
    cwd: PathStr | None = Field(
        None,
        description=f"Folder to run in; files the code writes with relative names land here (default: the outputs folder). {RELATIVE_NOTE}",
    )
    args: list[str] = Field(default_factory=list, description="Command-line arguments for the script (sys.argv[1:]).")
    timeout_s: float = Field(60, gt=0, le=3600, description="Stop the script after this many seconds.")


def interpreter_argv() -> list[str]:
    """How to start a Python interpreter: the app itself with --run-python when frozen."""
    if getattr(sys, "frozen", False):
        return [sys.executable, FLAG]
    return [sys.executable]


class PythonRunnerTool(BaseTool):
    Config = PythonRunnerConfig

    @action(
        "Run a Python 3 snippet in a separate interpreter and return what it prints (stdout, stderr, exit "
        "code). Use it for calculations, data processing and generating files. The snippet cannot read "
        "input; files it writes with relative names go to the outputs folder."
    )
    async def run(self, params: RunParams, ctx: ToolContext) -> ToolResult:
        if len(params.code) > self.config.max_code_chars:
            raise ToolError(f"The code is longer than {self.config.max_code_chars} characters; split it up.")
        if "\x00" in params.code:
            raise ToolError("The code contains a NUL character; send plain text.")
        try:
            compile(params.code, "snippet.py", "exec")
        except SyntaxError as exc:
            raise ToolError(
                f"The code has a syntax error at line {exc.lineno}: {exc.msg}. Fix it and run again."
            ) from None
        if params.cwd:
            cwd = PathGuard(ctx).resolve(params.cwd, must_exist=True)
        else:
            cwd = Path(ctx.outputs_dir)
            await asyncio.to_thread(cwd.mkdir, parents=True, exist_ok=True)
        if not await asyncio.to_thread(Path.is_dir, cwd):
            raise ToolError(f"{cwd} is a file; cwd must be a folder.")
        timeout = min(params.timeout_s, self.config.max_timeout_s)
        workdir = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="weclaw-py-"))
        try:
            script = workdir / "snippet.py"
            await asyncio.to_thread(script.write_text, params.code, encoding="utf-8")
            before = await asyncio.to_thread(snapshot, cwd)
            env = safe_env(extra={"PYTHONIOENCODING": "utf-8", "PYTHONUTF8": "1", "PYTHONDONTWRITEBYTECODE": "1"})
            ctx.progress(None, "running Python")
            outcome = await run_process(
                [*interpreter_argv(), str(script), *params.args],
                cwd=cwd,
                env=env,
                timeout_s=timeout,
                output_limit=self.config.output_limit,
                progress=ctx.progress,
            )
            files = produced(before, await asyncio.to_thread(snapshot, cwd))
        finally:
            await asyncio.shield(asyncio.to_thread(shutil.rmtree, workdir, True))
        if timeout < params.timeout_s:
            outcome.notes.append(f"timeout capped at {timeout:g} s")
        text = format_outcome(outcome, f"python snippet ({len(params.code.splitlines())} lines, in {cwd})")
        return outcome_result(outcome, text, cwd, files, failure_hint="The script failed; fix the code and run again.")
