"""MCP figures: time to connect to a stdio server, and the latency of a call through the dispatcher.

    python bench/mcp_calls.py [--calls 300]

Uses the test server (tests/mcp/mcp_test_server.py) over stdio; prints median and p99.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from weclaw_desktop.mcp import McpManager, ServerState  # noqa: E402
from weclaw_desktop.settings import McpServerSettings  # noqa: E402
from weclaw_desktop.toolkit import NO_ROUND, AutoApprove, Dispatcher, ToolCall, ToolContext, ToolRegistry  # noqa: E402
from weclaw_desktop.toolkit.manifest import Manifest  # noqa: E402


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def main(calls: int) -> None:
    registry = ToolRegistry(Manifest(tools={}))
    settings = McpServerSettings(
        name="bench", command=sys.executable, args=[str(ROOT / "tests" / "mcp" / "mcp_test_server.py")], trusted=True
    )
    with tempfile.TemporaryDirectory() as tmp:
        manager = McpManager(registry, log_dir=Path(tmp))
        t0 = time.perf_counter()
        tool = manager.start(settings)
        assert tool is not None
        await tool.connection.wait_for(ServerState.CONNECTED, ServerState.DOWN, within=60)
        connect_s = time.perf_counter() - t0
        dispatcher = Dispatcher(registry)
        gate = AutoApprove()
        ctx = ToolContext(outputs_dir=Path(tmp) / "out", data_dir=Path(tmp), db=None)
        latencies = []
        for i in range(calls):
            t = time.perf_counter()
            outcome = await dispatcher.dispatch(
                ToolCall(id=str(i), name="mcp_bench_add", arguments='{"a": 1, "b": 2}'),
                ctx,
                gate=gate,
                offered=NO_ROUND,  # a direct call: the bench measures the pipeline, not a model round
            )
            latencies.append((time.perf_counter() - t) * 1000)
            assert outcome.succeeded, outcome.result.output
        t = time.perf_counter()
        await manager.stop_all()
        stop_s = time.perf_counter() - t
    print(f"connect (spawn + initialize + list tools): {connect_s:.2f} s")
    print(
        f"call via dispatcher, {calls} calls: median {statistics.median(latencies):.2f} ms, p99 {pct(latencies, 0.99):.2f} ms"
    )
    print(f"stop (close stdin, wait, reap): {stop_s:.2f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    asyncio.run(main(parser.parse_args().calls))
