"""Figures for the web, calculator and datetime tools: latency (median, p99) and dependency weight.

Run from the repository root: ``python bench/tools_b_bench.py``. Prints one line per figure.
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from tools.web_site import ARTICLE

from weclaw_desktop.tools.calc_eval import unit_registry
from weclaw_desktop.tools.calculator import calculate
from weclaw_desktop.tools.timeparse import parse_moment
from weclaw_desktop.tools.web.extract import html_to_text


def timed(name: str, fn: Callable[[], object], runs: int) -> None:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    samples.sort()
    p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))]
    print(f"{name:<44} median {statistics.median(samples):8.3f} ms   p99 {p99:8.3f} ms   (n={runs})")


def package_mb(*modules: str) -> float:
    total = 0
    for name in modules:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.origin:
            continue
        root = Path(spec.origin).parent if spec.submodule_search_locations else Path(spec.origin)
        total += sum(f.stat().st_size for f in ([root] if root.is_file() else root.rglob("*")) if f.is_file())
    return total / 1e6


def main() -> None:
    t0 = time.perf_counter()
    unit_registry()
    print(f"{'pint registry build (once per run)':<44} {(time.perf_counter() - t0) * 1000:8.1f} ms")
    timed("calculator: (3.5 + 2) * 4 / sqrt(2)", lambda: calculate("(3.5 + 2) * 4 / sqrt(2)", None, None), 2000)
    timed("calculator: 5 km to miles", lambda: calculate("5 km to miles", None, None), 500)
    timed("calculator: 9**9**9 refused", lambda: _refused("9**9**9"), 2000)
    big_page = (
        "<html><head><title>Big</title></head><body>" + ("<p>" + "word " * 200 + "</p>") * 1000 + "</body></html>"
    )
    timed("html_to_text: article (2 KB)", lambda: html_to_text(ARTICLE), 200)
    timed(f"html_to_text: {len(big_page) / 1e6:.1f} MB page", lambda: html_to_text(big_page), 10)
    tz = ZoneInfo("Asia/Shanghai")
    timed("parse_moment: '3 weeks from today'", lambda: parse_moment("3 weeks from today", tz), 2000)
    timed("parse_moment: '2025年3月5日 下午3点半'", lambda: parse_moment("2025年3月5日 下午3点半", tz), 2000)
    ours = package_mb(
        "readability", "lxml", "lxml_html_clean", "cssselect", "chardet", "pint", "flexcache", "flexparser"
    )
    print(f"{'installed size: readability-lxml + lxml + pint':<44} {ours:8.1f} MB")
    traf = package_mb(
        "trafilatura",
        "htmldate",
        "courlan",
        "justext",
        "dateparser",
        "babel",
        "regex",
        "pytz",
        "tzlocal",
        "tld",
        "lxml",
    )
    if traf:
        print(f"{'installed size: trafilatura and its closure':<44} {traf:8.1f} MB (not used)")


def _refused(expression: str) -> None:
    from weclaw_desktop.tools.calc_eval import CalcError

    try:
        calculate(expression, None, None)
    except CalcError:
        return
    raise AssertionError("should have been refused")


if __name__ == "__main__":
    main()
