"""Child processes die with the app: how procrun starts a command so that ``kill -9`` of the app ends it.

- **Linux and macOS**: the command runs under a small supervisor (``childguard.py``) that leads its own
  process group and holds the read end of the app's *lifeline* pipe; when the app dies the pipe reads
  EOF and the supervisor kills the group (on Linux also ``PR_SET_PDEATHSIG``). See childguard.py.
- **Windows**: the command is started suspended, put into one Job Object with
  ``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`` that the app holds open, then resumed; when the app dies the
  system closes the job's handle and ends every process in it, grandchildren included.

One lifeline / one job per app process, made on first use and never closed: the OS closes it when the
process ends, which is the whole point.

Programs the app does not start itself (the MCP SDK's ``stdio_client`` spawns stdio servers, passing no
FD) are tied to the app with :func:`watching_parent`: the same supervisor, which then watches its parent
process instead of a lifeline pipe (pidfd / kqueue / getppid, see childguard.py). On Windows the SDK puts
a stdio server into its own kill-on-close Job Object, so nothing is added there.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger("weclaw.tools.lifetime")

IS_WINDOWS = sys.platform == "win32"
CHILD_GUARD_FLAG = "--child-guard"  # the frozen app runs childguard.main() when started with it

_lock = threading.Lock()
_lifeline: tuple[int, int] | None = None  # (read end passed to supervisors, write end kept here)


def lifeline_fd() -> int:
    """The read end of the app's lifeline pipe (the write end stays open, unshared, until the app ends)."""
    global _lifeline
    with _lock:
        if _lifeline is None:
            read_end, write_end = os.pipe()  # both non-inheritable; pass_fds shares the read end only
            _lifeline = (read_end, write_end)
        return _lifeline[0]


def _guard_argv() -> list[str]:
    if getattr(sys, "frozen", False):
        return [sys.executable, CHILD_GUARD_FLAG]
    return [sys.executable, "-I", "-S", str(Path(__file__).with_name("childguard.py"))]


def wrap(argv: Sequence[str]) -> tuple[list[str], dict[str, Any]]:
    """The argv and the extra ``create_subprocess_exec`` arguments that tie ``argv`` to the app's life."""
    if IS_WINDOWS:
        flags = (
            getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
            | getattr(subprocess, "CREATE_NO_WINDOW", 0)
            | (_CREATE_SUSPENDED if _job.usable() else 0)
        )
        return list(argv), {"creationflags": flags}
    fd = lifeline_fd()
    return [*_guard_argv(), str(fd), "--", *argv], {"start_new_session": True, "pass_fds": (fd,)}


def watching_parent(argv: Sequence[str]) -> list[str]:
    """``argv`` under the supervisor in its ``--parent`` mode, for a spawner that passes no FD (the MCP SDK).

    The spawner must start it as the leader of a new session (the SDK does: ``start_new_session``), with no
    process in between, so the supervisor's parent is this app. Its standard streams reach the program
    untouched. Windows: ``argv`` unchanged (the SDK's kill-on-close Job Object ends the tree with the app).
    """
    if IS_WINDOWS:
        return list(argv)
    return [*_guard_argv(), "--parent", "--", *argv]


def check_program(command: str, *, path: str | None, cwd: str | None = None) -> None:
    """Raise what starting ``command`` would raise, before a supervisor hides it behind exit status 127:
    FileNotFoundError when it is not found (on ``path``, or relative to ``cwd``), PermissionError when it
    cannot be run. POSIX; Windows resolves programs its own way (no supervisor there)."""
    if IS_WINDOWS:
        return
    candidate = command
    if os.sep in command and not os.path.isabs(command) and cwd:
        candidate = os.path.join(cwd, command)
    if shutil.which(candidate, path=path) is not None:
        return
    if os.sep in command and os.path.isfile(candidate):
        raise PermissionError(13, "Permission denied", command)
    raise FileNotFoundError(2, "No such file or directory", command)


def adopt(pid: int) -> None:
    """Right after the start: Windows puts the suspended process into the app's job and resumes it."""
    if IS_WINDOWS and _job.usable():
        _job.adopt(pid)


# --- Windows ---------------------------------------------------------------------------------------------
_CREATE_SUSPENDED = 0x00000004


class _Job:  # pragma: no cover - exercised on Windows only
    """The app's kill-on-close Job Object (ctypes, kernel32 / ntdll)."""

    def __init__(self) -> None:
        self.handle: int | None = None
        self.failed = not IS_WINDOWS

    def usable(self) -> bool:
        if self.handle is None and not self.failed:
            with _lock:
                if self.handle is None and not self.failed:
                    try:
                        self.handle = _create_kill_on_close_job()
                    except OSError as exc:
                        log.warning("no job object for child processes (%s); they may outlive a crash", exc)
                        self.failed = True
        return self.handle is not None

    def adopt(self, pid: int) -> None:
        import ctypes
        from ctypes import wintypes

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
        ntdll = ctypes.WinDLL("ntdll")  # type: ignore[attr-defined]
        kernel32.OpenProcess.restype = wintypes.HANDLE
        kernel32.OpenProcess.argtypes = [wintypes.DWORD, wintypes.BOOL, wintypes.DWORD]
        kernel32.AssignProcessToJobObject.argtypes = [wintypes.HANDLE, wintypes.HANDLE]
        kernel32.CloseHandle.argtypes = [wintypes.HANDLE]
        ntdll.NtResumeProcess.argtypes = [wintypes.HANDLE]
        access = 0x0001 | 0x0100 | 0x0800  # PROCESS_TERMINATE | PROCESS_SET_QUOTA | PROCESS_SUSPEND_RESUME
        process = kernel32.OpenProcess(access, False, pid)
        if not process:
            log.warning("cannot open child %d: error %d", pid, ctypes.get_last_error())  # type: ignore[attr-defined]
            return
        try:
            if not kernel32.AssignProcessToJobObject(self.handle, process):
                log.warning("cannot put child %d into the job: error %d", pid, ctypes.get_last_error())  # type: ignore[attr-defined]
        finally:
            ntdll.NtResumeProcess(process)  # never leave it suspended, job or not
            kernel32.CloseHandle(process)


def _create_kill_on_close_job() -> int:  # pragma: no cover - Windows only
    import ctypes
    from ctypes import wintypes

    class BasicLimits(ctypes.Structure):
        _fields_ = [
            ("PerProcessUserTimeLimit", ctypes.c_int64),
            ("PerJobUserTimeLimit", ctypes.c_int64),
            ("LimitFlags", wintypes.DWORD),
            ("MinimumWorkingSetSize", ctypes.c_size_t),
            ("MaximumWorkingSetSize", ctypes.c_size_t),
            ("ActiveProcessLimit", wintypes.DWORD),
            ("Affinity", ctypes.c_size_t),
            ("PriorityClass", wintypes.DWORD),
            ("SchedulingClass", wintypes.DWORD),
        ]

    class IoCounters(ctypes.Structure):
        _fields_ = [
            (name, ctypes.c_uint64)
            for name in ("Read", "Write", "Other", "ReadTransfer", "WriteTransfer", "OtherTransfer")
        ]

    class ExtendedLimits(ctypes.Structure):
        _fields_ = [
            ("BasicLimitInformation", BasicLimits),
            ("IoInfo", IoCounters),
            ("ProcessMemoryLimit", ctypes.c_size_t),
            ("JobMemoryLimit", ctypes.c_size_t),
            ("PeakProcessMemoryUsed", ctypes.c_size_t),
            ("PeakJobMemoryUsed", ctypes.c_size_t),
        ]

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    kernel32.CreateJobObjectW.restype = wintypes.HANDLE
    kernel32.SetInformationJobObject.argtypes = [wintypes.HANDLE, ctypes.c_int, ctypes.c_void_p, wintypes.DWORD]
    kernel32.CloseHandle.argtypes = [wintypes.HANDLE]
    job = kernel32.CreateJobObjectW(None, None)  # no security attributes: the handle is not inherited
    if not job:
        raise OSError(ctypes.get_last_error(), "CreateJobObjectW failed")  # type: ignore[attr-defined]
    info = ExtendedLimits()
    info.BasicLimitInformation.LimitFlags = 0x00002000  # JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
    if not kernel32.SetInformationJobObject(job, 9, ctypes.byref(info), ctypes.sizeof(info)):  # extended limits
        error = ctypes.get_last_error()  # type: ignore[attr-defined]
        kernel32.CloseHandle(job)
        raise OSError(error, "SetInformationJobObject failed")
    return int(job)


_job = _Job()
