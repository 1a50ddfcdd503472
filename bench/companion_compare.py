"""This tree's encrypted download against another tree's (e.g. a copy of main), run after run on one machine.

    git -C /work/main archive HEAD | tar -x -C /tmp/main-copy
    python bench/companion_compare.py /tmp/main-copy [--runs 4] [--size-mb 1024] [--rounds 3] [--loop asyncio]

bench/companion.py is copied into the other tree's bench/ (so both trees are measured by the same script, each
serving with its own companion code), then the two trees' desktop-side benches run alternately (the order flips
every run). A shared machine's speed drifts from minute to minute, so what is compared is each round's ratio
sealed/plain measured within seconds of each other, pooled per tree (median and range), and the server's CPU
seconds per GB of the sealed download, which does not depend on how much of the machine the bench was given.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
COPY = "companion_bench_copy.py"


def run_tree(tree: Path, script: Path, record: Path, args: argparse.Namespace) -> None:
    cmd = [sys.executable, str(script), "--skip-page", "--size-mb", str(args.size_mb), "--rounds", str(args.rounds)]
    cmd += ["--loop", args.loop, "--record", str(record)]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(cmd, env=env, cwd=tree, capture_output=True, text=True, check=False)
    ratio = next((line.strip() for line in out.stdout.splitlines() if "sealed/FileResponse" in line), out.stderr[-400:])
    print(f"  {tree}: {ratio}", flush=True)


def summary(rows: list[dict[str, Any]]) -> dict[str, float]:
    gb = rows[0]["size_mb"] / 1024
    per: dict[str, list[float]] = {"ours/plain": [], "ours/streamed": [], "ours MB/s": [], "server CPU s/GB": []}
    for row in rows:
        t = row["times"]
        for ours, plain, streamed in zip(t["ours"], t["plain"], t["streamed"], strict=True):
            per["ours/plain"].append(plain[0] / ours[0])
            per["ours/streamed"].append(streamed[0] / ours[0])
            per["ours MB/s"].append(row["size_mb"] / ours[0])
            per["server CPU s/GB"].append(ours[1] / gb)
    out: dict[str, float] = {}
    for name, values in per.items():
        out[name], out[name + " min"], out[name + " max"] = statistics.median(values), min(values), max(values)
    out["rss MB max"] = max(row["rss_mb"] for row in rows)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("other", type=Path, help="the other tree (a checkout or archive of main)")
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--loop", choices=("asyncio", "qasync"), default="asyncio")
    args = parser.parse_args()
    other = args.other.resolve()
    shutil.copy(HERE / "bench" / "companion.py", other / "bench" / COPY)
    trees = {"this": (HERE, HERE / "bench" / "companion.py"), "other": (other, other / "bench" / COPY)}
    with tempfile.TemporaryDirectory(prefix="weclaw-compare-") as tmp:
        records = {name: Path(tmp) / f"{name}.jsonl" for name in trees}
        for i in range(args.runs):
            print(f"run {i + 1}/{args.runs}, load {os.getloadavg()[0]:.1f}", flush=True)
            for name in ("this", "other") if i % 2 == 0 else ("other", "this"):
                tree, script = trees[name]
                run_tree(tree, script, records[name], args)
        results = {}
        for name, path in records.items():
            rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
            if not rows:
                print(f"{name}: no result (see the errors above)")
                return 1
            results[name] = summary(rows)
    print(f"\n{args.runs} runs x {args.rounds} rounds per tree, {args.size_mb} MB, {args.loop} loop")
    print(f"{'':22}{'this: ' + str(HERE):>40}   {'other: ' + str(other)}")
    for key in ("ours/plain", "ours/streamed", "ours MB/s", "server CPU s/GB"):
        a, b = results["this"], results["other"]
        pct = key.startswith("ours/")

        def fmt(r: dict[str, float], key: str = key, pct: bool = pct) -> str:
            f = "{:.0%}" if pct else "{:.2f}" if "CPU" in key else "{:.0f}"
            return f"{f.format(r[key])} ({f.format(r[key + ' min'])}..{f.format(r[key + ' max'])})"

        print(f"  {key:<20}{fmt(a):>40}   {fmt(b)}")
    print(f"  {'RSS growth MB (max)':<20}{results['this']['rss MB max']:>40.1f}   {results['other']['rss MB max']:.1f}")
    print(f"  target: ours/plain >= 70%: this {'PASS' if results['this']['ours/plain'] >= 0.7 else 'FAIL'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
