"""A 3-round tool-using turn of ``weclaw chat`` against a server that enforces DeepSeek's thinking-mode rule.

    python scripts/deepseek_demo.py

The server (tests/providers/provider_servers.py) answers HTTP 400 with DeepSeek's own error body whenever an
assistant message with tool calls comes back without its ``reasoning_content``. The model thinks, calls two tools
in parallel, thinks, calls one more, thinks and answers; then a second question follows in the same chat, from a
new process. Prints what the user sees (stdout: the answer and tool lines; stderr: the thinking), the rejections
(none), what each request sent back, and what the database stored. Everything stays in a temp folder on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "agent"), str(ROOT / "tests" / "providers")]

from agent_support import child_env, write_manifest  # noqa: E402
from provider_servers import Call, RuleServer, deepseek_rule, turn_reply  # noqa: E402

from weclaw_desktop.paths import app_paths  # noqa: E402
from weclaw_desktop.settings import Settings, SettingsStore  # noqa: E402

THOUGHTS = [
    "The user wants three words echoed. Two can go at once. ",
    "Both came back. One more call for the last word. ",
    "All three are back; answer in one line. ",
    "A follow-up; no tools needed. ",
]


async def chat(args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "weclaw_desktop", "chat", *args,
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, stdin=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    out, err = await proc.communicate()
    return proc.returncode or 0, out.decode(), err.decode()


async def main() -> None:
    server = await RuleServer(deepseek_rule).start()
    server.push(
        turn_reply(
            reasoning=(THOUGHTS[0],), calls=(Call("echo_say", {"text": "alpha"}), Call("echo_say", {"text": "beta"}))
        ),
        turn_reply(reasoning=(THOUGHTS[1],), calls=(Call("echo_say", {"text": "gamma"}),)),
        turn_reply(reasoning=(THOUGHTS[2],), text=("Echoed: alpha, beta, gamma.",)),
        turn_reply(reasoning=(THOUGHTS[3],), text=("Yes, all three.",)),
    )
    base = Path(tempfile.mkdtemp(prefix="weclaw-deepseek-demo-"))
    paths = app_paths(base / "home").ensure()
    settings = Settings()
    settings.provider.preset, settings.provider.base_url, settings.provider.model = (
        "deepseek",
        server.base_url,
        "deepseek-flash",
    )
    settings.agent.exposure = "all"
    SettingsStore.open(paths).save(settings)
    tools = write_manifest(base / "tools.json")
    env = child_env(base / "home", WECLAW_API_KEY="sk-demo-0000")
    common = ["--yes", "--no-mcp", "--tools", str(tools)]
    code, out, err = await chat(["echo alpha, beta and gamma", "--new", *common], env)
    print(f"$ weclaw chat 'echo alpha, beta and gamma'   (exit {code})\n--- stdout ---\n{out}--- stderr ---\n{err}")
    code2, out2, _ = await chat(["did you get all three?", *common], env)
    print(f"$ weclaw chat 'did you get all three?'   (exit {code2}, a new process)\n--- stdout ---\n{out2}")
    print(f"requests: {len(server.requests)}, rejected by the DeepSeek rule: {len(server.rejections)}")
    for i, body in enumerate(server.requests):
        sent = [m.get("reasoning_content") for m in body["messages"] if m["role"] == "assistant"]
        print(f"  request {i + 1}: reasoning_content of the assistant messages sent back: {json.dumps(sent)}")
    conn = sqlite3.connect(paths.database)
    rows = conn.execute("SELECT role, substr(content, 1, 40), reasoning, meta FROM messages ORDER BY id").fetchall()
    conn.close()
    print("stored messages (role, content, reasoning, meta):")
    for row in rows:
        print("  ", row)
    await server.stop()


if __name__ == "__main__":
    os.environ.setdefault("LANG", "C.UTF-8")
    asyncio.run(main())
