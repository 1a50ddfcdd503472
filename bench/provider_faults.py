"""How long each stream fault takes to reach the user, with the default budget (or the one given).

    python bench/provider_faults.py [--first-token 60] [--idle 60] [--retries 2] [--cli]

Starts the scripted fault servers of tests/providers (accepts and never answers; only keep-alive comments; part of
an answer then only keep-alives; no finish_reason and no [DONE] with two tool calls; an invalid JSON chunk) and
streams one completion from each through the real Provider with the given timeouts, printing the seconds until
the error and its message. ``--cli`` also runs ``weclaw chat`` as a separate process against the silent server
and prints its wall time and exit code (what a user at a terminal waits). Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "agent"), str(ROOT / "tests" / "providers")]

from provider_servers import (  # noqa: E402
    Call,
    RuleServer,
    bad_json_reply,
    keepalive_reply,
    silent_reply,
    truncated_reply,
    turn_reply,
)

from weclaw_desktop.agent.provider import Provider, ProviderConfig, ProviderError, StreamTimeouts  # noqa: E402


async def one(name: str, replies: list, timeouts: StreamTimeouts, retries: int) -> None:  # type: ignore[type-arg]
    server = await RuleServer().start()
    server.push(*replies)
    provider = Provider(
        ProviderConfig(server.base_url, "m", api_key="sk-bench", max_retries=retries, timeouts=timeouts)
    )
    t0 = time.monotonic()
    try:
        await provider.stream([{"role": "user", "content": "hi"}], [])
        outcome = "no error (!)"
    except ProviderError as exc:
        outcome = f"[{exc.kind}] {exc.message}"
    elapsed = time.monotonic() - t0
    await provider.close()
    await server.stop()
    print(f"{name:<34} {elapsed:7.1f} s  requests={len(server.requests)}  {outcome}", flush=True)


async def cli(timeouts: StreamTimeouts, retries: int) -> None:
    server = await RuleServer().start()
    server.push(*[silent_reply() for _ in range(retries + 1)])
    home = tempfile.mkdtemp(prefix="weclaw-bench-")
    env = {**os.environ, "WECLAW_HOME": home, "WECLAW_API_KEY": "sk-bench", "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "weclaw_desktop", "chat", "hello?", "--base-url", server.base_url, "--model", "m"]
    t0 = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *cmd, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, stdin=asyncio.subprocess.DEVNULL
    )
    _, err = await proc.communicate()
    elapsed = time.monotonic() - t0
    await server.stop()
    last = err.decode().strip().splitlines()[-1] if err else ""
    print(f"{'weclaw chat, silent endpoint':<34} {elapsed:7.1f} s  exit={proc.returncode}  {last}", flush=True)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--first-token", type=float, default=StreamTimeouts().first_token_s)
    parser.add_argument("--idle", type=float, default=StreamTimeouts().idle_s)
    parser.add_argument("--retries", type=int, default=2)
    parser.add_argument("--cli", action="store_true")
    args = parser.parse_args()
    timeouts = StreamTimeouts(first_token_s=args.first_token, idle_s=args.idle)
    n = args.retries + 1
    print(f"first-token budget {args.first_token:g} s (retries included), idle {args.idle:g} s, {args.retries} retries")
    await one("accepts, never answers", [silent_reply() for _ in range(n)], timeouts, args.retries)
    await one("only keep-alive comments", [keepalive_reply() for _ in range(n)], timeouts, args.retries)
    await one("part, then only keep-alives", [keepalive_reply(after=2, text="Half")], timeouts, args.retries)
    cut = truncated_reply(turn_reply(calls=(Call("proc_env"), Call("echo_say", {"text": "x"}))))
    await one("no finish_reason, no [DONE]", [cut], timeouts, args.retries)
    await one("invalid JSON chunk", [bad_json_reply("Before")], timeouts, args.retries)
    if args.cli:
        await cli(timeouts, args.retries)


if __name__ == "__main__":
    asyncio.run(main())
