"""The system_info tool: CPU, memory, battery, uptime, OS, top processes and disks, through psutil.

Every psutil call blocks (CPU percent needs two samples a short interval apart), so each action runs its
work in a thread with ``asyncio.to_thread``.
"""

from __future__ import annotations

import asyncio
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Literal

import psutil
from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.frozen import child_environ
from weclaw_desktop.toolkit import BaseTool, NoParams, ToolContext, ToolError, ToolResult, action

#: File systems that are not disks a user cares about.
PSEUDO_FS = frozenset(
    [
        "squashfs",
        "tmpfs",
        "devtmpfs",
        "overlay",
        "proc",
        "sysfs",
        "cgroup",
        "cgroup2",
        "autofs",
        "devfs",
        "nullfs",
        "ramfs",
        "efivarfs",
    ]
)


class SystemInfoConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sample_s: float = Field(default=0.5, ge=0.05, le=5, description="Interval between the two CPU samples")


class ProcessParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sort_by: Literal["cpu", "memory"] = Field(default="cpu", description="Rank processes by CPU or by memory use")
    limit: int = Field(default=10, ge=1, le=50, description="How many processes to list")
    name_contains: str | None = Field(
        default=None, max_length=100, description="Only processes whose name contains this text (case-insensitive)"
    )


class DiskParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str | None = Field(
        default=None,
        max_length=4000,
        description="A folder or file; report only the disk that holds it. Leave empty for all disks.",
    )


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def human_duration(seconds: float) -> str:
    minutes, _ = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    parts = [f"{days} d"] if days else []
    if days or hours:
        parts.append(f"{hours} h")
    parts.append(f"{minutes} min")
    return " ".join(parts)


def cpu_model() -> str:
    """The marketing name of the CPU, best effort per platform."""
    try:
        if sys.platform.startswith("linux"):
            for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
        elif sys.platform == "darwin":
            out = subprocess.run(
                ["sysctl", "-n", "machdep.cpu.brand_string"],
                capture_output=True,
                text=True,
                timeout=2,
                check=False,
                env=child_environ(),
            )
            if out.stdout.strip():
                return out.stdout.strip()
        elif sys.platform == "win32":
            import winreg

            with winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, r"HARDWARE\DESCRIPTION\System\CentralProcessor\0") as key:
                return str(winreg.QueryValueEx(key, "ProcessorNameString")[0]).strip()
    except (OSError, subprocess.SubprocessError, IndexError):
        pass
    return platform.processor() or platform.machine() or "unknown"


def os_name() -> str:
    if sys.platform == "darwin":
        return f"macOS {platform.mac_ver()[0]}".strip()
    if sys.platform == "win32":
        release, version, *_ = platform.win32_ver()
        return f"Windows {release} (build {version})"
    try:
        pretty = platform.freedesktop_os_release().get("PRETTY_NAME")
    except OSError:
        pretty = None
    return f"{pretty or platform.system()} (kernel {platform.release()})"


def overview(sample_s: float) -> dict[str, Any]:
    mem = psutil.virtual_memory()
    swap = psutil.swap_memory()
    info: dict[str, Any] = {
        "os": os_name(),
        "hostname": platform.node(),
        "architecture": platform.machine(),
        "python": platform.python_version(),
        "cpu": {
            "model": cpu_model(),
            "physical_cores": psutil.cpu_count(logical=False),
            "logical_cores": psutil.cpu_count(logical=True),
            "percent": psutil.cpu_percent(interval=sample_s),
        },
        "memory": {"total": mem.total, "available": mem.available, "percent": mem.percent},
        "swap": {"total": swap.total, "used": swap.used, "percent": swap.percent},
        "uptime_s": round(time.time() - psutil.boot_time()),
    }
    freq = _safe(psutil.cpu_freq)
    if freq is not None and freq.current:
        info["cpu"]["mhz"] = round(freq.current)
    if hasattr(os, "getloadavg"):
        info["cpu"]["load_avg"] = [round(x, 2) for x in os.getloadavg()]
    battery = _safe(psutil.sensors_battery) if hasattr(psutil, "sensors_battery") else None
    if battery is not None:
        info["battery"] = {
            "percent": round(battery.percent),
            "plugged_in": battery.power_plugged,
            "time_left_s": battery.secsleft if isinstance(battery.secsleft, int) and battery.secsleft >= 0 else None,
        }
    return info


def _safe(fn: Any) -> Any:
    try:
        return fn()
    except (OSError, RuntimeError, NotImplementedError, AttributeError):
        return None


def overview_text(info: dict[str, Any]) -> str:
    cpu, mem, swap = info["cpu"], info["memory"], info["swap"]
    lines = [
        f"OS: {info['os']} on {info['architecture']}, host {info['hostname']}",
        f"CPU: {cpu['model']}, {cpu['physical_cores'] or '?'} cores / {cpu['logical_cores']} threads"
        + (f", {cpu['mhz']} MHz" if "mhz" in cpu else "")
        + f", {cpu['percent']:.0f}% busy"
        + (f", load {' '.join(str(x) for x in cpu['load_avg'])}" if "load_avg" in cpu else ""),
        f"Memory: {human_bytes(mem['total'] - mem['available'])} used of {human_bytes(mem['total'])} "
        f"({mem['percent']:.0f}%), {human_bytes(mem['available'])} available",
        f"Swap: {human_bytes(swap['used'])} used of {human_bytes(swap['total'])}" if swap["total"] else "Swap: none",
        f"Uptime: {human_duration(info['uptime_s'])}",
    ]
    battery = info.get("battery")
    if battery:
        left = f", about {human_duration(battery['time_left_s'])} left" if battery["time_left_s"] else ""
        plugged = "charging / plugged in" if battery["plugged_in"] else "on battery"
        lines.append(f"Battery: {battery['percent']}%, {plugged}{left}")
    else:
        lines.append("Battery: none (desktop or not reported)")
    return "\n".join(lines)


def top_processes(
    sort_by: str, limit: int, name_contains: str | None, sample_s: float
) -> tuple[list[dict[str, Any]], int]:
    """The top processes and how many matched. CPU percent is measured over ``sample_s``."""
    needle = (name_contains or "").lower()
    procs: list[psutil.Process] = []
    for proc in psutil.process_iter(["pid", "name"]):
        name = proc.info.get("name") or ""
        if needle and needle not in name.lower():
            continue
        try:
            proc.cpu_percent(None)  # first sample
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
        procs.append(proc)
    time.sleep(sample_s)
    rows: list[dict[str, Any]] = []
    for proc in procs:
        try:
            with proc.oneshot():
                rows.append(
                    {
                        "pid": proc.pid,
                        "name": proc.info.get("name") or "?",
                        "cpu_percent": round(proc.cpu_percent(None), 1),
                        "memory_bytes": proc.memory_info().rss,
                        "user": _safe(proc.username) or "",
                    }
                )
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    key = "cpu_percent" if sort_by == "cpu" else "memory_bytes"
    rows.sort(key=lambda r: (r[key], r["memory_bytes"]), reverse=True)
    return rows[:limit], len(rows)


def disks(path: str | None) -> list[dict[str, Any]]:
    if path:
        target = Path(path).expanduser()
        if not target.exists():
            raise ToolError(f"'{path}' does not exist. Give an existing folder, or leave path empty for all disks.")
        usage = psutil.disk_usage(str(target))
        return [_disk_row(str(target), _mount_of(target), "", usage)]
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for part in psutil.disk_partitions(all=False):
        if part.fstype in PSEUDO_FS or part.device in seen or part.mountpoint.startswith(("/snap/", "/boot/efi")):
            continue
        try:
            usage = psutil.disk_usage(part.mountpoint)
        except (OSError, PermissionError):  # an empty card reader or a disc drive without a disc
            continue
        seen.add(part.device)
        rows.append(_disk_row(part.device, part.mountpoint, part.fstype, usage))
    return rows


def _mount_of(path: Path) -> str:
    best = ""
    resolved = path.resolve()
    for part in psutil.disk_partitions(all=True):
        mount = part.mountpoint
        if resolved.is_relative_to(mount) and len(mount) > len(best):
            best = mount
    return best or str(resolved)


def _disk_row(device: str, mount: str, fstype: str, usage: Any) -> dict[str, Any]:
    return {
        "device": device,
        "mount": mount,
        "fstype": fstype,
        "total": usage.total,
        "used": usage.used,
        "free": usage.free,
        "percent": usage.percent,
    }


class SystemInfoTool(BaseTool):
    Config = SystemInfoConfig

    @action(
        "Summary of this computer: operating system, CPU model, cores and how busy it is, memory and swap use, "
        "battery level and uptime. Use it when the user asks about their computer or why it is slow."
    )
    async def overview(self, params: NoParams, ctx: ToolContext) -> ToolResult:
        info = await asyncio.to_thread(overview, self.config.sample_s)
        return ToolResult.ok(overview_text(info), data=info)

    @action(
        "List the running programs that use the most CPU or memory (pid, name, CPU %, memory). "
        "Use it to find what slows the computer down. 100% CPU means one full core."
    )
    async def processes(self, params: ProcessParams, ctx: ToolContext) -> ToolResult:
        ctx.progress(None, "sampling processes")
        rows, matched = await asyncio.to_thread(
            top_processes, params.sort_by, params.limit, params.name_contains, self.config.sample_s
        )
        if not rows:
            what = f" named like '{params.name_contains}'" if params.name_contains else ""
            return ToolResult.ok(f"No running process{what} was found.", data={"processes": [], "matched": 0})
        by = "CPU" if params.sort_by == "cpu" else "memory"
        lines = [f"Top {len(rows)} of {matched} processes by {by}:"]
        for r in rows:
            lines.append(
                f"{r['pid']:>7}  {r['cpu_percent']:5.1f}% CPU  {human_bytes(r['memory_bytes']):>9}  {r['name']}"
            )
        return ToolResult.ok("\n".join(lines), data={"processes": rows, "matched": matched, "sort_by": params.sort_by})

    @action(
        "Show the disks (drives) of this computer with total size, used and free space. Give a path to see "
        "only the disk that holds it. Use it when the user asks how much space is left."
    )
    async def disk_usage(self, params: DiskParams, ctx: ToolContext) -> ToolResult:
        rows = await asyncio.to_thread(disks, params.path)
        if not rows:
            return ToolResult.ok("No disks were reported by the system.", data={"disks": []})
        lines = []
        for r in rows:
            lines.append(
                f"{r['mount']} ({r['device']}{', ' + r['fstype'] if r['fstype'] else ''}): "
                f"{human_bytes(r['free'])} free of {human_bytes(r['total'])} ({r['percent']:.0f}% used)"
            )
        return ToolResult.ok("\n".join(lines), data={"disks": rows})
