"""A child process cannot obtain the API key from the app's process (#13 item 5).

On Linux ``/proc/<pid>/environ`` shows the environment a process was *started* with; removing the key
from ``os.environ`` does not change it. ``weclaw`` re-executes itself without secret variables before
anything else runs. What must survive: a shell command the model runs reads its parent's initial
environment and finds no key, no other secret variable, and the app still uses the key (the fake server
saw it) and still has the other variables (they are put back in its live environment only).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from agent_support import TEST_KEY, chat_cmd, child_env
from fakeopenai import FakeOpenAI, call, text_reply, tool_reply

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/<pid>/environ is Linux's")

#: Every ancestor's initial environment (the app, and any supervisor between it and the shell), up to pid 1.
ANCESTORS = (
    'p=$PPID; : > {dump}; while [ "$p" -gt 1 ]; do echo "== $p $(cat /proc/$p/comm)" >> {dump}; '
    "tr '\\0' '\\n' < /proc/$p/environ >> {dump}; p=$(awk '{{print $4}}' /proc/$p/stat); done"
)
OTHER = "AWS_SECRET_ACCESS_KEY"
OTHER_VALUE = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY"


async def _run(args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *args, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, stdin=asyncio.subprocess.DEVNULL
    )
    out, err = await asyncio.wait_for(proc.communicate(), 90)
    return proc.returncode or 0, out.decode(), err.decode()


async def test_a_child_reading_its_parents_initial_environment_finds_no_key(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    dump = tmp_path / "parent-environ.txt"
    live = tmp_path / "parent-live.txt"
    command = ANCESTORS.format(dump=dump)
    fake_openai.push(
        tool_reply(call("shell_run", {"command": command, "cwd": str(tmp_path)})),
        tool_reply(call("python_runner_run", {"code": _live_probe(live)})),
        text_reply("done"),
    )
    home = tmp_path / "weclaw"
    env = child_env(home, WECLAW_API_KEY=TEST_KEY, **{OTHER: OTHER_VALUE}, HOME=str(tmp_path))
    args = chat_cmd("run it", "--yes", "--exposure", "all", "--base-url", fake_openai.base_url, "--model", "m")
    code, _out, err = await _run(args, env)
    assert code == 0, err
    text = dump.read_text()
    assert "PATH=" in text and f"WECLAW_HOME={home}" in text  # the app's own environment is among them
    assert TEST_KEY not in text and "WECLAW_API_KEY" not in text
    assert OTHER_VALUE not in text
    # the app used the key (it came through the pipe, not the environment)
    assert fake_openai.headers[0].get("Authorization") == f"Bearer {TEST_KEY}"
    # python_runner (a child too) sees neither the key nor the other secret in its own environment
    assert live.read_text() == "key=False other=False"


def _live_probe(path: Path) -> str:
    return (
        "import os\n"
        f"open({str(path)!r}, 'w').write("
        f"f\"key={{'WECLAW_API_KEY' in os.environ}} other={{{OTHER!r} in os.environ}}\")\n"
    )


async def test_api_key_env_names_a_variable_that_is_taken_too(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    """``--api-key-env MY_KEY``: that variable is also out of the initial environment, and still used."""
    dump = tmp_path / "parent-environ.txt"
    fake_openai.push(
        tool_reply(call("shell_run", {"command": ANCESTORS.format(dump=dump)})),
        text_reply("done"),
    )
    env = child_env(tmp_path / "weclaw", MY_PROVIDER_SEKRIT="sk-other-5b1e9d7c3a", HOME=str(tmp_path))
    args = chat_cmd(
        "run it", "--yes", "--exposure", "all", "--base-url", fake_openai.base_url, "--model", "m",
        "--api-key-env", "MY_PROVIDER_SEKRIT",
    )  # fmt: skip
    code, _out, err = await _run(args, env)
    assert code == 0, err
    assert "sk-other-5b1e9d7c3a" not in dump.read_text()
    assert fake_openai.headers[0].get("Authorization") == "Bearer sk-other-5b1e9d7c3a"


def test_nothing_to_take_means_no_restart(monkeypatch: pytest.MonkeyPatch) -> None:
    from weclaw_desktop import secrets

    monkeypatch.delenv("WECLAW_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for name in list(os.environ):
        if secrets.is_secret_name(name):
            monkeypatch.delenv(name)

    def boom(*a: object) -> None:
        raise AssertionError("must not re-exec")

    monkeypatch.setattr(os, "execve", boom)
    secrets.reexec_without_secrets(["weclaw"])
