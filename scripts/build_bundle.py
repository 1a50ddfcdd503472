#!/usr/bin/env python3
"""Build the PyInstaller bundle (onedir) and run its self-test.

    python scripts/build_bundle.py [--skip-build] [--max-mb 220]

Exits non-zero when the build fails, the bundle's ``--self-test`` fails, or the bundle is larger than
``--max-mb``. Prints the bundle size, build time and self-test time. Works on Windows, macOS and Linux;
CI runs it on Linux.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-build", action="store_true", help="self-test an existing dist/weclaw")
    ap.add_argument("--max-mb", type=float, default=220.0)
    ap.add_argument("--dist", default=str(ROOT / "dist"))
    args = ap.parse_args()
    dist = Path(args.dist)
    build_s = 0.0
    if not args.skip_build:
        t0 = time.perf_counter()
        cmd = [
            sys.executable,
            "-m",
            "PyInstaller",
            "--noconfirm",
            "--clean",
            "--log-level",
            "WARN",
            "--distpath",
            str(dist),
            "--workpath",
            str(ROOT / "build"),
            str(ROOT / "build.spec"),
        ]
        print("building:", " ".join(cmd), flush=True)
        if subprocess.run(cmd, cwd=ROOT).returncode != 0:
            print("build failed", file=sys.stderr)
            return 1
        build_s = time.perf_counter() - t0
    bundle = dist / "weclaw"
    exe = bundle / ("weclaw.exe" if os.name == "nt" else "weclaw")
    if not exe.exists():
        print(f"no executable at {exe}", file=sys.stderr)
        return 1
    size_mb = folder_size(bundle) / 1e6
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "WECLAW_HOME": home, "QT_QPA_PLATFORM": "offscreen", "LANG": "C.UTF-8"}
        for name in ("WECLAW_API_KEY", "OPENAI_API_KEY", "PYTHONPATH", "WECLAW_TOOLS"):
            env.pop(name, None)
        t0 = time.perf_counter()
        proc = subprocess.run([str(exe), "--self-test"], env=env, capture_output=True, text=True, timeout=300)
        test_s = time.perf_counter() - t0
    print(proc.stdout, end="")
    if proc.stderr.strip():
        print(proc.stderr[-4000:], file=sys.stderr, end="")
    print(f"bundle: {bundle}")
    print(f"bundle size: {size_mb:.1f} MB (limit {args.max_mb:.0f} MB)")
    if build_s:
        print(f"build time: {build_s:.1f} s")
    print(f"self-test: exit {proc.returncode} in {test_s:.2f} s")
    if proc.returncode != 0:
        print("FAIL: the bundle's self-test failed", file=sys.stderr)
        return 1
    if size_mb > args.max_mb:
        print(f"FAIL: the bundle is {size_mb:.1f} MB, over {args.max_mb:.0f} MB", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
