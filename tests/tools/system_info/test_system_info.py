"""The system_info tool through the Dispatcher: real psutil figures on this machine."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from toolrun import Run

from weclaw_desktop.toolkit import ToolStatus


@pytest.fixture
def busy_child() -> Iterator[subprocess.Popen[bytes]]:
    """A child process that spins one core and holds 300 MB of memory."""
    code = "import time\nblock = bytearray(300 * 1024 * 1024)\nwhile True:\n    pass\n"
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        child = psutil.Process(proc.pid)
        for _ in range(200):  # wait until the memory is really allocated
            if child.memory_info().rss > 250 * 1024 * 1024:
                break
            psutil.cpu_percent(0.02)
        yield proc
    finally:
        proc.kill()
        proc.wait()


async def test_overview_reports_this_machine(run: Run) -> None:
    res = await run("system_info_overview")
    assert res.succeeded, res.output
    data = res.data
    assert data["cpu"]["logical_cores"] == psutil.cpu_count()
    assert 0 <= data["cpu"]["percent"] <= 100
    assert data["memory"]["total"] == psutil.virtual_memory().total
    assert data["swap"]["total"] == psutil.swap_memory().total
    assert 0 < data["uptime_s"] <= psutil.time.time() - psutil.boot_time() + 5
    assert ("battery" in data) == (psutil.sensors_battery() is not None)
    assert res.output.startswith("OS: ")
    assert f"{psutil.cpu_count()} threads" in res.output
    assert "Uptime: " in res.output


async def test_overview_takes_no_arguments(run: Run) -> None:
    res = await run("system_info_overview", verbose=True)
    assert res.status is ToolStatus.ERROR
    assert "unknown argument 'verbose'" in res.output


async def test_processes_by_cpu_finds_the_busy_child(run: Run, busy_child: subprocess.Popen[bytes]) -> None:
    # Other programs share this machine's cores, so the spinner is not always first; it is among the busy ones.
    res = await run("system_info_processes", sort_by="cpu", limit=50)
    assert res.succeeded, res.output
    rows = res.data["processes"]
    assert len(rows) == min(50, res.data["matched"])
    assert [r["cpu_percent"] for r in rows] == sorted((r["cpu_percent"] for r in rows), reverse=True)
    spinner = next(r for r in rows if r["pid"] == busy_child.pid)
    assert spinner["cpu_percent"] > 5  # measured over two samples, not the 0.0 a single sample gives
    assert f"{busy_child.pid:>7}" in res.output
    res = await run("system_info_processes", sort_by="cpu", limit=2)
    assert len(res.data["processes"]) == 2 and res.output.startswith("Top 2 of ")


async def test_processes_by_memory_and_name(run: Run, busy_child: subprocess.Popen[bytes]) -> None:
    name = psutil.Process(busy_child.pid).name()
    res = await run("system_info_processes", sort_by="memory", limit=50, name_contains=name.upper())
    assert res.succeeded, res.output
    rows = res.data["processes"]
    assert all(name.lower() in r["name"].lower() for r in rows)
    assert rows[0]["pid"] == busy_child.pid or rows[0]["memory_bytes"] >= 300 * 1024 * 1024
    assert [r["memory_bytes"] for r in rows] == sorted((r["memory_bytes"] for r in rows), reverse=True)


async def test_processes_with_no_match(run: Run) -> None:
    res = await run("system_info_processes", name_contains="no-such-process-xyz")
    assert res.succeeded
    assert res.output == "No running process named like 'no-such-process-xyz' was found."
    assert res.data == {"processes": [], "matched": 0}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"sort_by": "disk"}, "sort_by: Input should be 'cpu' or 'memory'"),
        ({"limit": 0}, "limit:"),
        ({"limit": 51}, "limit:"),
    ],
)
async def test_processes_bad_arguments(run: Run, args: dict[str, object], message: str) -> None:
    res = await run("system_info_processes", **args)
    assert res.status is ToolStatus.ERROR
    assert message in res.output


async def test_disk_usage_all_and_for_a_path(run: Run, tmp_path: Path) -> None:
    res = await run("system_info_disk_usage")
    assert res.succeeded, res.output
    assert res.data["disks"], "at least one disk"
    for disk in res.data["disks"]:
        assert disk["total"] == psutil.disk_usage(disk["mount"]).total
    res = await run("system_info_disk_usage", path=str(tmp_path))
    assert res.succeeded, res.output
    (disk,) = res.data["disks"]
    assert disk["total"] == psutil.disk_usage(str(tmp_path)).total
    assert Path(disk["mount"]) in [tmp_path.resolve(), *tmp_path.resolve().parents]  # noqa: ASYNC240 - a tiny local file in a test
    assert "free of" in res.output


async def test_disk_usage_bad_path(run: Run, tmp_path: Path) -> None:
    res = await run("system_info_disk_usage", path=str(tmp_path / "nope"))
    assert res.status is ToolStatus.ERROR
    assert "does not exist" in res.output
    res = await run("system_info_disk_usage", path=["not", "a", "string"])
    assert res.status is ToolStatus.ERROR and "path:" in res.output
