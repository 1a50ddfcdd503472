"""What crash-only reliability costs and how fast it acts (#18).

    python bench/reliability.py [--rounds 20]

Prints, each as a median (and worst) over ``--rounds``:

- the cost of the supervisor (tools/childguard.py) per command: ``true`` through procrun.run_process
  with and without the lifeline wrapper;
- how long after a SIGKILL of the app its command tree is gone (a child process that ran a command
  through procrun is killed; the command's pid is polled);
- one session lock take + release (storage/locks.py) and the start-up header check of a 60 MB
  weclaw.db (storage/db.py ``damage_found``);
- parse_arguments on a 100,000-deep JSON (the "invalid arguments" path) and on a 1 MB file_write.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from weclaw_desktop.storage.db import damage_found  # noqa: E402
from weclaw_desktop.storage.locks import NamedLocks  # noqa: E402
from weclaw_desktop.toolkit.jsonargs import ArgumentsError, parse_arguments  # noqa: E402
from weclaw_desktop.tools import lifetime, procrun  # noqa: E402


def report(name: str, samples: list[float], unit: str = "ms") -> None:
    print(f"{name:<52} median {statistics.median(samples):8.2f} {unit}   worst {max(samples):8.2f} {unit}")


async def spawn_cost(rounds: int) -> None:
    env = dict(os.environ)
    for label, wrap in (("direct", False), ("supervised (childguard)", True)):
        samples = []
        original = lifetime.wrap
        if not wrap:
            lifetime.wrap = lambda argv: (list(argv), {"start_new_session": True})  # type: ignore[assignment]
        try:
            for _ in range(rounds):
                t0 = time.perf_counter()
                await procrun.run_process(["/bin/true"], cwd=Path("/tmp"), env=env, timeout_s=10, output_limit=1000)
                samples.append((time.perf_counter() - t0) * 1000)
        finally:
            lifetime.wrap = original  # type: ignore[assignment]
        report(f"run_process(/bin/true), {label}", samples)


APP = """
import asyncio, os, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from weclaw_desktop.tools.procrun import run_process
async def main():
    await run_process(["/bin/sh", "-c", f"echo $$ > {sys.argv[2]}; exec sleep 60"], cwd=Path("/tmp"),
                      env=dict(os.environ), timeout_s=120, output_limit=1000)
asyncio.run(main())
"""


def kill_latency(rounds: int) -> None:
    samples = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(rounds):
            pidfile = Path(tmp) / f"pid{i}"
            app = subprocess.Popen([sys.executable, "-c", APP, str(ROOT), str(pidfile)])
            while not pidfile.exists() or not pidfile.read_text().strip():
                time.sleep(0.005)
            pid = int(pidfile.read_text())
            t0 = time.perf_counter()
            app.send_signal(signal.SIGKILL)
            while True:
                try:
                    with open(f"/proc/{pid}/stat", "rb") as fh:
                        if fh.read().split(b") ", 1)[1][:1] == b"Z":
                            break
                except FileNotFoundError:
                    break
                time.sleep(0.0005)
            samples.append((time.perf_counter() - t0) * 1000)
            app.wait()
    report("SIGKILL of the app -> its command gone", samples)


def locks_and_header(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        locks = NamedLocks(Path(tmp) / "weclaw.db-locks")
        samples = []
        for i in range(rounds * 50):
            t0 = time.perf_counter()
            assert locks.acquire(f"session:{i}")
            locks.release(f"session:{i}")
            samples.append((time.perf_counter() - t0) * 1e6)
        report("session lock acquire + release", samples, "us")

        import sqlite3

        db = Path(tmp) / "weclaw.db"
        conn = sqlite3.connect(db)
        conn.execute("CREATE TABLE m(x TEXT)")
        conn.executemany("INSERT INTO m VALUES(?)", (("x" * 600,) for _ in range(100_000)))
        conn.commit()
        conn.close()
        samples = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            assert damage_found(db) is None
            samples.append((time.perf_counter() - t0) * 1000)
        report(f"damage_found() header check, {db.stat().st_size / 1e6:.0f} MB database", samples)


def arguments(rounds: int) -> None:
    deep = '{"a":' * 100_000 + "1" + "}" * 100_000
    big = json.dumps({"path": "~/a.txt", "content": "文本 text\n" * 100_000})
    for label, text in (
        ("100,000-deep arguments (refused)", deep),
        (f"file_write of {len(big) / 1e6:.1f} M chars", big),
    ):
        samples = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            with contextlib.suppress(ArgumentsError):
                parse_arguments(text)
            samples.append((time.perf_counter() - t0) * 1000)
        report(f"parse_arguments: {label}", samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    asyncio.run(spawn_cost(args.rounds))
    kill_latency(max(3, args.rounds // 4))
    locks_and_header(args.rounds)
    arguments(args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
