"""How fast an MCP stdio server dies with the app, and what its supervisor costs (tools/childguard.py --parent).

    PYTHONPATH=. python bench/mcp_lifetime.py [--rounds N]

Prints: the start-up cost of the supervisor (``/bin/true`` direct vs under ``--parent``), and how long after a
SIGKILL of the process that started it (the app's place) the supervised command is gone; with pidfd +
PR_SET_PDEATHSIG (Linux default) and with the getppid poll that other POSIX gets. The command is ``sleep`` (a
server that ignores its stdin's EOF, or a child a server left): a server that exits on EOF dies anyway.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GUARD = ROOT / "weclaw_desktop" / "tools" / "childguard.py"
POLL_ONLY = (
    "import os, sys; sys.path.insert(0, sys.argv[1]); import childguard;"
    "os.__dict__.pop('pidfd_open', None); childguard.select.__dict__.pop('kqueue', None);"
    "childguard._linux_prctl = lambda sig: None; sys.exit(childguard.main(sys.argv[2:]))"
)
APP = (  # the app's place: starts the supervised server like the SDK (new session, pipes), then waits
    "import subprocess, sys; p = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,"
    "start_new_session=True); open(sys.argv[1], 'w').write(str(p.pid)); sys.stdin.read()"
)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().split(b") ", 1)[1][:1] != b"Z"
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True


def _startup(rounds: int) -> None:
    for label, argv in (
        ("direct", ["/bin/true"]),
        ("--parent", [sys.executable, "-I", "-S", str(GUARD), "--parent", "--", "/bin/true"]),
    ):
        times = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            subprocess.run(argv, start_new_session=True, check=True)
            times.append((time.perf_counter() - t0) * 1000)
        print(f"start {label:9} /bin/true: median {statistics.median(times):6.1f} ms, worst {max(times):6.1f} ms")


def _kill_round(guard: list[str], folder: Path) -> float:
    pid_file = folder / "guard.pid"
    pid_file.unlink(missing_ok=True)
    argv = [sys.executable, "-c", APP, str(pid_file), *guard, "--", "sleep", "60"]
    app = subprocess.Popen(argv, stdin=subprocess.PIPE)
    while not (pid_file.exists() and pid_file.read_text()):
        time.sleep(0.01)
    supervisor = int(pid_file.read_text())
    time.sleep(0.3)  # the supervisor is watching
    t0 = time.perf_counter()
    app.send_signal(signal.SIGKILL)
    app.wait()
    while _alive(supervisor):
        if time.perf_counter() - t0 > 10:
            raise SystemExit("the supervised command outlived the app by 10 s")
        time.sleep(0.002)
    return (time.perf_counter() - t0) * 1000


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    _startup(args.rounds * 2)
    with tempfile.TemporaryDirectory(prefix="mcp-lifetime-") as tmp:
        for label, guard in (
            ("pidfd+pdeathsig", [sys.executable, "-I", "-S", str(GUARD), "--parent"]),
            ("getppid poll", [sys.executable, "-I", "-S", "-c", POLL_ONLY, str(GUARD.parent), "--parent"]),
        ):
            times = [_kill_round(guard, Path(tmp)) for _ in range(args.rounds)]
            print(
                f"SIGKILL of the app -> command gone ({label}): median {statistics.median(times):6.1f} ms, "
                f"worst {max(times):6.1f} ms ({args.rounds} rounds)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
