"""Availability expressions: each signal, the combinators, and the diagnostic codes."""

from __future__ import annotations

from typing import Any

import pytest

from weclaw_desktop.toolkit.availability import AvailabilityContext, RequirementModel, evaluate
from weclaw_desktop.toolkit.diagnostics import Code


def _codes(expr: dict[str, Any], **ctx: Any) -> list[str]:
    req = RequirementModel.model_validate(expr).root
    return [d.code.value for d in evaluate(req, "tool", AvailabilityContext(**ctx))]


def test_bridge() -> None:
    assert _codes({"bridge": "clipboard"}) == ["bridge-missing"]
    assert _codes({"bridge": "clipboard"}, bridges={"clipboard"}) == []


def test_config() -> None:
    assert _codes({"config": "host"}, tool_config=lambda t: {"host": ""}) == ["config-missing"]
    assert _codes({"config": "host"}, tool_config=lambda t: {"host": "smtp.example"}) == []


def test_secret() -> None:
    assert _codes({"secret": "email.password"}) == ["auth-missing"]
    assert _codes({"secret": "email.password"}, has_secret=lambda n: n == "email.password") == []


def test_env() -> None:
    assert _codes({"env": "GITHUB_TOKEN"}, environ={}) == ["env-missing"]
    assert _codes({"env": "GITHUB_TOKEN"}, environ={"GITHUB_TOKEN": "x"}) == []


def test_module() -> None:
    assert _codes({"module": "surely_not_a_module_xyz", "package": "xyz-pkg"}) == ["dependency-missing"]
    assert _codes({"module": "json"}) == []
    req = RequirementModel.model_validate({"module": "surely_not_a_module_xyz", "package": "xyz-pkg"}).root
    (diag,) = evaluate(req, "t", AvailabilityContext())
    assert diag.hint == "Install it with: pip install xyz-pkg"


@pytest.mark.parametrize(("platform", "expected"), [("linux", []), ("win32", ["platform-unsupported"])])
def test_platform(platform: str, expected: list[str]) -> None:
    assert _codes({"platform": ["linux", "darwin"]}, platform=platform) == expected


def test_all_of_reports_every_missing_part() -> None:
    expr = {"allOf": [{"config": "host"}, {"secret": "pw"}, {"bridge": "notifier"}]}
    assert _codes(expr, bridges={"notifier"}) == ["config-missing", "auth-missing"]


def test_any_of_passes_when_one_passes_and_reports_all_otherwise() -> None:
    expr = {"anyOf": [{"env": "A"}, {"env": "B"}]}
    assert _codes(expr, environ={"B": "1"}) == []
    assert _codes(expr, environ={}) == ["env-missing", "env-missing"]


def test_not() -> None:
    assert _codes({"not": {"platform": "win32"}}, platform="linux") == []
    assert _codes({"not": {"platform": "win32"}}, platform="win32") == [Code.PLATFORM_UNSUPPORTED.value]


def test_nested_combination() -> None:
    expr = {"allOf": [{"anyOf": [{"env": "A"}, {"module": "json"}]}, {"not": {"bridge": "companion"}}]}
    assert _codes(expr, environ={}) == []
    assert _codes(expr, environ={}, bridges={"companion"}) == ["bridge-missing"]
