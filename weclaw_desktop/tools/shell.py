"""The shell tool: run one command in the platform's shell (bash/sh on macOS/Linux, PowerShell on Windows).

The command runs in its own process group with an environment stripped of secrets (safe_env), in a folder
checked by pathguard, with a timeout and an output cap that keeps the head and the tail. Stop (cancellation)
and timeouts kill the whole process tree.
"""

from __future__ import annotations

import asyncio
import base64
import shutil
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.toolkit.argkinds import PathStr
from weclaw_desktop.toolkit.base import BaseTool, ToolContext, ToolError, ToolResult, action
from weclaw_desktop.tools.pathguard import RELATIVE_NOTE, PathGuard
from weclaw_desktop.tools.procrun import IS_WINDOWS, format_outcome, outcome_result, produced, run_process, snapshot
from weclaw_desktop.tools.safe_env import safe_env


class ShellConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_timeout_s: float = Field(
        590, gt=0, description="upper bound for a command's timeout; keep it below the tools.json timeout_s"
    )
    output_limit: int = Field(20_000, ge=1000, description="characters of output kept (head and tail)")
    shell: str = Field("", description="shell program to use; '' = bash (or sh) on POSIX, PowerShell on Windows")


class RunParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(
        min_length=1,
        description="The command line to run. On Windows it is PowerShell syntax; elsewhere bash/sh syntax.",
    )
    cwd: PathStr | None = Field(None, description=f"Folder to run in (default: the home folder). {RELATIVE_NOTE}")
    timeout_s: float = Field(60, gt=0, le=3600, description="Stop the command after this many seconds.")


def shell_argv(command: str, configured: str = "") -> list[str]:
    """The argv that runs ``command`` in the platform shell."""
    if IS_WINDOWS:
        program = configured or shutil.which("pwsh") or shutil.which("powershell") or "powershell.exe"
        prelude = "[Console]::OutputEncoding = [System.Text.Encoding]::UTF8; $ProgressPreference = 'SilentlyContinue'; "
        encoded = base64.b64encode((prelude + command).encode("utf-16-le")).decode("ascii")
        return [program, "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-EncodedCommand", encoded]
    program = configured or shutil.which("bash") or "/bin/sh"
    return [program, "-c", command]


class ShellTool(BaseTool):
    Config = ShellConfig

    @action(
        "Run a command in the system shell (PowerShell on Windows, bash on macOS/Linux) and return its exit "
        "code and output. Use it for tasks no other tool covers; prefer the file tool for file operations. "
        "Commands cannot read input; long output is cut keeping the start and the end."
    )
    async def run(self, params: RunParams, ctx: ToolContext) -> ToolResult:
        if "\x00" in params.command:
            raise ToolError("The command contains a NUL character; send plain text.")
        guard = PathGuard(ctx)
        cwd = guard.resolve(params.cwd or "~", must_exist=True)
        if not await asyncio.to_thread(Path.is_dir, cwd):
            raise ToolError(f"{cwd} is a file; cwd must be a folder.")
        timeout = min(params.timeout_s, self.config.max_timeout_s)
        argv = shell_argv(params.command, self.config.shell)
        before = await asyncio.to_thread(snapshot, cwd)
        ctx.progress(None, f"running: {params.command[:80]}")
        try:
            outcome = await run_process(
                argv,
                cwd=cwd,
                env=safe_env(),
                timeout_s=timeout,
                output_limit=self.config.output_limit,
                progress=ctx.progress,
            )
        except FileNotFoundError:
            raise ToolError(f"The shell program {argv[0]} was not found on this computer.") from None
        if timeout < params.timeout_s:
            outcome.notes.append(f"timeout capped at {timeout:g} s")
        files = produced(before, await asyncio.to_thread(snapshot, cwd))
        text = format_outcome(outcome, f"$ {params.command}  (in {cwd})")
        return outcome_result(outcome, text, cwd, files)
