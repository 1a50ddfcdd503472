"""The self-test's report: a failing check prints FAIL with its reason, the others still run, exit is 1."""

from __future__ import annotations

import io

from weclaw_desktop.selfcheck.report import CheckFailed, SelfTestReport


def _boom() -> str:
    raise CheckFailed("tools.json not found at /x")


def _crash() -> str:
    return str(1 / 0)


async def _async_ok() -> str:
    return "streamed"


async def test_failures_are_reported_and_the_run_goes_on() -> None:
    out = io.StringIO()
    report = SelfTestReport(out)
    assert report.check("first", lambda: "fine") is True
    assert report.check("paths", _boom) is False
    assert report.check("crash", _crash) is False
    assert await report.acheck("provider", _async_ok) is True
    lines = out.getvalue().splitlines()
    assert [line.split()[:2] for line in lines] == [
        ["ok", "first"],
        ["FAIL", "paths"],
        ["FAIL", "crash"],
        ["ok", "provider"],
    ]
    assert lines[1].endswith("tools.json not found at /x")
    assert "ZeroDivisionError: division by zero at test_report.py:" in lines[2]
    assert not report.ok
    assert report.summary().startswith("self-test FAILED: 2 of 4 checks failed (paths, crash)")


def test_an_empty_report_is_not_a_pass() -> None:
    report = SelfTestReport(io.StringIO())
    assert not report.ok
    report.check("only", lambda: "ok")
    assert report.ok and report.summary().startswith("self-test passed: 1/1 checks")
