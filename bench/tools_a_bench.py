"""Figures for the file, shell, python_runner and archive tools (median and p99 over repeated runs).

Run from the repository root:  python bench/tools_a_bench.py
Works in a temp folder used as the home folder; touches nothing else.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from weclaw_desktop.toolkit import ToolContext
from weclaw_desktop.tools.archive import ArchiveTool, UnzipParams, ZipParams
from weclaw_desktop.tools.file import FileTool, ReadParams, SearchParams
from weclaw_desktop.tools.python_runner import PythonRunnerTool
from weclaw_desktop.tools.python_runner import RunParams as PyParams
from weclaw_desktop.tools.shell import RunParams as ShParams
from weclaw_desktop.tools.shell import ShellTool


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


async def measure(label: str, runs: int, fn: Callable[[], Awaitable[object]]) -> None:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        await fn()
        times.append((time.perf_counter() - t0) * 1000)
    print(f"{label:<52} median {statistics.median(times):8.1f} ms   p99 {p99(times):8.1f} ms   (n={runs})")


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        out = Path(tmp) / "out"
        home.mkdir()
        out.mkdir()
        os.environ["HOME"] = str(home)
        os.environ["WECLAW_HOME"] = str(Path(tmp) / "weclaw")
        ctx = ToolContext(outputs_dir=out, data_dir=Path(tmp) / "weclaw", db=None, allowed_roots=[home])
        ft, sh, py, ar = FileTool(), ShellTool(), PythonRunnerTool(), ArchiveTool()

        line = "这是一个用于测试的中文行，包含一些标点符号和数字 12345。\n"
        (home / "big_gbk.txt").write_bytes((line * 60000).encode("gbk"))  # ~3.8 MB
        tree = home / "tree"
        for d in range(50):
            (tree / f"d{d}").mkdir(parents=True)
            for f in range(100):
                (tree / f"d{d}" / f"f{f}.txt").write_text(f"file {d}-{f}\n" * 20 + ("needle\n" if f == 99 else ""))
        blob = home / "blob"
        blob.mkdir()
        for i in range(20):
            (blob / f"part{i}.bin").write_bytes(os.urandom(1024 * 1024) if i % 2 else b"text " * 200_000)

        print(f"python {sys.version.split()[0]} on {sys.platform}, {os.cpu_count()} cpus")
        await measure(
            "file_read 3.8 MB GBK (detect + first 60k chars)", 20, lambda: ft.read(ReadParams(path="big_gbk.txt"), ctx)
        )
        await measure(
            "file_search name '*.txt' over 5000 files",
            10,
            lambda: ft.search(SearchParams(path="tree", name="*.txt", max_results=10000), ctx),
        )
        await measure(
            "file_search content 'needle' over 5000 files",
            10,
            lambda: ft.search(SearchParams(path="tree", content="needle", max_results=100), ctx),
        )
        await measure("shell_run 'echo hi' (spawn + collect)", 30, lambda: sh.run(ShParams(command="echo hi"), ctx))
        await measure("python_runner_run 'print(1)'", 10, lambda: py.run(PyParams(code="print(1)"), ctx))

        n = 0

        async def zip_once() -> None:
            nonlocal n
            n += 1
            await ar.zip(ZipParams(sources=["blob"], output=str(out / f"b{n}.zip")), ctx)

        await measure("archive_zip 20 MB (half random, half text)", 5, zip_once)
        m = 0

        async def unzip_once() -> None:
            nonlocal m
            m += 1
            await ar.unzip(UnzipParams(archive=str(out / "b1.zip"), destination=str(out / f"x{m}")), ctx)

        await measure("archive_unzip the same 20 MB (checks + extract)", 5, unzip_once)


if __name__ == "__main__":
    asyncio.run(main())
