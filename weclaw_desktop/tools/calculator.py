"""The calculator tool: exact, safe evaluation of math expressions, with unit conversion through pint.

Currencies are not converted: exchange rates change daily and the calculator works offline, so it says
so and points the model at web search for today's rate.
"""

from __future__ import annotations

import asyncio
import math
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from weclaw_desktop.toolkit import BaseTool, ToolContext, ToolError, ToolResult, action
from weclaw_desktop.tools.calc_eval import CalcError, evaluate, parse_unit, unit_registry

#: "5 km to miles", "100 degF in degC", "3 斤 换算成 kg": the last keyword splits value and target unit.
_CONVERSION = re.compile(
    r"^(.+)\s+(?:to|in|into|as|->|→|=>)\s+([^\d\s].*)$|^(.+?)\s*(?:换算成|换成|转换成|转成|等于多少|是多少)\s*(.+)$",
    re.I,
)


class CalculatorParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    expression: str = Field(
        min_length=1,
        max_length=500,
        description="The math to compute, e.g. '(3.5 + 2) * 4', 'sqrt(2) * 10', '15% of 240', '2^64', "
        "'5 km to miles', '72 degF in degC', '3 斤 换算成 kg'",
    )
    to: str | None = Field(
        default=None, max_length=60, description="Unit to convert the result to (alternative to writing 'to ...')"
    )
    decimals: int | None = Field(default=None, ge=0, le=15, description="Round the shown result to this many decimals")


def format_number(value: int | float, decimals: int | None = None, *, digits: int = 15) -> str:
    if isinstance(value, int):
        return str(value)
    if decimals is not None:
        return f"{value:.{decimals}f}"
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return format(value, f".{digits}g")  # hides binary noise: 0.1 + 0.2 shows 0.3


def format_value(value: Any, decimals: int | None) -> tuple[str, dict[str, Any]]:
    if isinstance(value, int | float):
        text = format_number(value, decimals)
        data: dict[str, Any] = {"value": value if isinstance(value, float) or value.bit_length() < 53 else text}
        if isinstance(value, int) and len(text) > 15:
            data["approx"] = f"{value:.6e}" if value.bit_length() < 1000 else f"{len(text.lstrip('-'))} digits"
        return text, data
    magnitude = value.magnitude
    if isinstance(magnitude, float | int):
        number = format_number(magnitude, decimals, digits=12)  # unit factors carry float error past 12 digits
    else:
        raise CalcError("The result is not a single number.")
    unit = f"{value.units:~P}"
    return f"{number} {unit}".strip(), {"value": float(magnitude), "unit": str(value.units), "unit_symbol": unit}


def split_conversion(expression: str) -> tuple[str, str | None]:
    match = _CONVERSION.match(expression.strip())
    if not match:
        return expression, None
    if match.group(1) is not None:
        return match.group(1), match.group(2).strip()
    return match.group(3), match.group(4).strip()


def calculate(expression: str, to: str | None, decimals: int | None) -> ToolResult:
    source, target = expression, to
    if target is None:
        left, unit = split_conversion(expression)
        if unit is not None:
            source, target = left, unit
    value = evaluate(source)
    if target:
        if isinstance(value, int | float):
            raise CalcError(
                f"'{source}' has no unit, so it cannot be converted to {target}. Write the unit, e.g. '5 km to miles'."
            )
        unit = parse_unit(target)
        try:
            value = value.to(unit)
        except Exception as exc:  # pint's DimensionalityError and OffsetUnitCalculusError
            raise CalcError(f"Cannot convert {value.units:~P} to {target}: {exc}") from None
    elif not isinstance(value, int | float) and value.dimensionless:
        value = value.to("dimensionless").magnitude
    if isinstance(value, float) and not math.isfinite(value):
        raise CalcError("The result is not a finite number.")
    text, data = format_value(value, decimals)
    shown = f"{expression} = {text}" if target is None or to is None else f"{expression} = {text} (in {target})"
    return ToolResult.ok(shown, data={"expression": expression, "result": text, **data})


class CalculatorTool(BaseTool):
    @action(
        "Compute a math expression exactly and safely: + - * / // % **, parentheses, percentages ('15% of 80'), "
        "functions (sqrt, cbrt, exp, log, ln, sin, cos, tan, asin, ..., round, floor, ceil, factorial, comb, gcd, "
        "min, max, mean, median), constants pi and e, big integers, and unit conversion ('5 km to miles', "
        "'100 km/h in m/s', '20 degC to degF', '3 斤 换算成 kg'). Use it for any arithmetic instead of guessing. "
        "Currencies are not converted (no live exchange rates)."
    )
    async def evaluate(self, params: CalculatorParams, ctx: ToolContext) -> ToolResult:
        needs_units = bool(re.search(r"[A-Za-z\u4e00-\u9fff]{2,}|\b[A-Za-z]\b", params.expression)) or params.to
        if needs_units and not unit_registry.cache_info().currsize:
            ctx.progress(None, "loading unit definitions")
            await asyncio.to_thread(unit_registry)  # about a second, once per run
        try:
            return await asyncio.to_thread(calculate, params.expression, params.to, params.decimals)
        except CalcError as exc:
            raise ToolError(str(exc)) from None
