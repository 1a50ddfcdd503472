"""The calculator through the Dispatcher: exact results, units, and refusal of unsafe or runaway input."""

from __future__ import annotations

import pytest
from toolrun import Run

from weclaw_desktop.toolkit import ToolStatus
from weclaw_desktop.tools.calc_eval import CalcError, evaluate, preprocess


@pytest.mark.parametrize(
    ("expression", "result"),
    [
        ("(3.5 + 2) * 4", "22"),
        ("0.1 + 0.2", "0.3"),
        ("2^64", "18446744073709551616"),
        ("2**0.5", "1.4142135623731"),
        ("sqrt(16) + cbrt(27)", "7"),
        ("sin(pi/2) + log(100, 10) + ln(e)", "4"),
        ("15% of 240", "36"),
        ("200 * 15%", "30"),
        ("10 % 3", "1"),
        ("17 mod 5", "2"),
        ("2pi", "6.28318530717959"),
        ("3 × 4 ÷ 2", "6"),
        ("round(2.71828, 3)", "2.718"),
        ("factorial(20)", "2432902008176640000"),
        ("comb(10, 3) + gcd(12, 18)", "126"),
        ("mean(1, 2, 3, 4)", "2.5"),
        ("-(-5) + +3", "8"),
        ("7 // 2", "3"),
    ],
)
async def test_evaluate(run: Run, expression: str, result: str) -> None:
    res = await run("calculator_evaluate", expression=expression)
    assert res.succeeded, res.output
    assert res.data["result"] == result
    assert res.output == f"{expression} = {result}"


@pytest.mark.parametrize(
    ("expression", "to", "result"),
    [
        ("5 km to miles", None, "3.10685596119 mi"),
        ("72 degF in degC", None, "22.2222222222 °C"),
        ("20 degC", "degF", "68 °F"),
        ("100 km/h", "m/s", "27.7777777778 m/s"),
        ("12 in to cm", None, "30.48 cm"),
        ("5 km + 300 m", None, "5.3 km"),
        ("3 斤 换算成 kg", None, "1.5 kg"),
        ("10 m**2 to ft**2", None, "107.639104167 ft²"),
        ("2 m / 4 m", None, "0.5"),
        ("1.5 GB to MB", None, "1500 MB"),
        ("1 mile", "公里", "1.609344 km"),
    ],
)
async def test_unit_conversion(run: Run, expression: str, to: str | None, result: str) -> None:
    args = {"expression": expression} | ({"to": to} if to else {})
    res = await run("calculator_evaluate", **args)
    assert res.succeeded, res.output
    assert res.data["result"] == result


async def test_decimals_rounds_the_shown_result(run: Run) -> None:
    res = await run("calculator_evaluate", expression="10/3", decimals=2)
    assert res.data["result"] == "3.33"
    assert res.data["value"] == pytest.approx(3.3333333333)


async def test_big_integers_stay_exact(run: Run) -> None:
    res = await run("calculator_evaluate", expression="2**200")
    assert res.data["result"] == str(2**200)
    assert res.data["approx"] == "1.606938e+60"


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("9**9**9", "too large"),
        ("10**10**10", "too large"),
        ("factorial(5000)", "factorial is limited to n <= 1000"),
        ("comb(10**6, 5)", "comb needs whole numbers up to 10000"),
        ("(10**3000) * (10**3000)", "too large to compute"),
        ("1e308 * 10", "not a finite number"),
        ("1/0", "Division by zero"),
        ("sqrt(-1)", "outside its domain"),
        ("(-8) ** (1/3)", "no real result"),
        ("__import__('os').system('echo hi')", "is not allowed"),
        ("(1).__class__.__bases__", "is not allowed"),
        ("'a' * 10", "Only numbers are allowed"),
        ("[1] * 10**9", "is not allowed"),
        ("lambda: 1", "is not allowed"),
        ("open('x')", "Unknown function 'open'"),
        ("sqrt", "is a function: write sqrt(x)"),
        ("2 +", "not a valid expression"),
        ("foo + 1", "Unknown name or unit 'foo'"),
        ("5 m to s", "Cannot convert m to s"),
        ("5 to km", "has no unit"),
        ("100 USD to CNY", "Currency conversion needs today's exchange rates"),
        ("50 美元 换成 人民币", "Currency conversion"),
        ("1" + "+1" * 149, "too complex"),
        ("-" * 100 + "1", "too complex"),
    ],
)
async def test_refused_expressions(run: Run, expression: str, message: str) -> None:
    res = await run("calculator_evaluate", expression=expression)
    assert res.status is ToolStatus.ERROR
    assert message in res.output


async def test_bad_arguments(run: Run) -> None:
    res = await run("calculator_evaluate", expression="")
    assert res.status is ToolStatus.ERROR and "expression:" in res.output
    res = await run("calculator_evaluate", expression="1" * 501)
    assert res.status is ToolStatus.ERROR and "expression:" in res.output
    res = await run("calculator_evaluate", expression="1+1", decimals=99)
    assert res.status is ToolStatus.ERROR and "decimals:" in res.output


def test_preprocess_binds_units_tighter_than_operators() -> None:
    assert preprocess("2 m / 4 m") == "(2*m) / (4*m)"
    assert preprocess("3 m^2") == "(3*m**2)"
    assert preprocess("2sin(pi/6)") == "2*sin(pi/6)"
    assert preprocess("1e3 + 2") == "1e3 + 2"


def test_evaluator_never_calls_eval(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("eval/exec must not be used")

    monkeypatch.setattr(builtins, "eval", forbidden)
    monkeypatch.setattr(builtins, "exec", forbidden)
    assert evaluate("2 * (3 + 4)") == 14
    with pytest.raises(CalcError):
        evaluate("__import__('os')")
