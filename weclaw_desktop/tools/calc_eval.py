"""A safe expression evaluator for the calculator: ``ast`` parsing and an allow-list walk, never eval/exec.

Numbers, ``+ - * / // % **``, math functions and constants, percentages and units (pint). Guards keep
work bounded: expression length, node count and depth, integer size (``9**9**9`` is refused before it
is computed), factorial and exponent limits, and finite float results.
"""

from __future__ import annotations

import ast
import functools
import math
import operator
import re
import statistics
from collections.abc import Callable
from typing import Any

MAX_CHARS = 500
MAX_NODES = 300
MAX_DEPTH = 60
MAX_INT_BITS = 10_000  # about 3000 decimal digits
MAX_FACTORIAL = 1000
MAX_UNIT_EXPONENT = 100


class CalcError(ValueError):
    """A bad or too-big expression; the message says what to change."""


CURRENCIES = frozenset(
    [
        "usd",
        "cny",
        "rmb",
        "eur",
        "jpy",
        "gbp",
        "hkd",
        "krw",
        "twd",
        "aud",
        "cad",
        "chf",
        "sgd",
        "inr",
        "rub",
        "btc",
        "元",
        "美元",
        "欧元",
        "人民币",
        "日元",
        "英镑",
        "港币",
        "韩元",
        "块",
    ]
)
#: Chinese unit names -> pint names (斤, 两 and 亩 are defined on first use).
CHINESE_UNITS = {
    "公里": "km", "千米": "km", "米": "m", "厘米": "cm", "毫米": "mm", "微米": "um", "纳米": "nm",
    "英里": "mile", "海里": "nautical_mile", "码": "yard", "英尺": "ft", "英寸": "inch",
    "千克": "kg", "公斤": "kg", "克": "g", "毫克": "mg", "吨": "t", "磅": "lb", "盎司": "oz",
    "斤": "jin", "两": "liang", "亩": "mu", "公顷": "hectare", "平方米": "m**2", "平方公里": "km**2",
    "升": "L", "毫升": "mL", "加仑": "gallon", "摄氏度": "degC", "华氏度": "degF", "开尔文": "K",
    "小时": "hour", "分钟": "minute", "秒": "second", "天": "day", "周": "week", "年": "year",
    "千瓦时": "kWh", "度电": "kWh", "瓦": "W", "千瓦": "kW", "焦耳": "J", "卡路里": "cal", "千卡": "kcal",
    "字节": "byte", "千字节": "kB", "兆字节": "MB", "吉字节": "GB",
}  # fmt: skip
EXTRA_UNITS = ("jin = 0.5 * kilogram", "liang = 50 * gram", "mu = 10000 / 15 * meter ** 2")


@functools.cache
def unit_registry() -> Any:
    """The pint registry (about a second to build; built once, on first use of a unit)."""
    import pint

    ureg: Any = pint.UnitRegistry(cache_folder=None)
    for definition in EXTRA_UNITS:
        ureg.define(definition)
    return ureg


def _checked_int(value: int) -> int:
    if value.bit_length() > MAX_INT_BITS:
        raise CalcError(f"The result has more than {MAX_INT_BITS * 0.30103:.0f} digits; that is too large to compute.")
    return value


def _pow(base: Any, exp: Any) -> Any:
    if _is_quantity(exp):
        exp = _plain(exp, "an exponent")
    if _is_unit_like(base):
        if not isinstance(exp, int | float) or abs(exp) > MAX_UNIT_EXPONENT:
            raise CalcError(f"Unit exponents must be numbers up to {MAX_UNIT_EXPONENT}.")
        return base**exp
    if isinstance(base, int) and isinstance(exp, int) and exp >= 0:
        if abs(base) > 1 and exp * math.log2(abs(base)) > MAX_INT_BITS:
            raise CalcError(f"{base}**{exp} has more than {MAX_INT_BITS * 0.30103:.0f} digits; that is too large.")
        return base**exp
    try:
        result = float(base) ** float(exp)
    except OverflowError:
        raise CalcError("The power is too large to compute.") from None
    except ZeroDivisionError:
        raise CalcError("0 cannot be raised to a negative power.") from None
    if isinstance(result, complex):
        raise CalcError("A negative number to a fractional power has no real result.")
    return result


def _mul(a: Any, b: Any) -> Any:
    # "25 degC" is a temperature, not 25 times one degree (pint refuses that product for offset units).
    ureg_unit = _unit_class()
    if ureg_unit is not None:
        if isinstance(b, ureg_unit) and isinstance(a, int | float):
            return unit_registry().Quantity(a, b)
        if isinstance(a, ureg_unit) and isinstance(b, int | float):
            return unit_registry().Quantity(b, a)
    return a * b


BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: _mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: _pow,
}


def _factorial(n: Any) -> int:
    if not float(n).is_integer() or n < 0:
        raise CalcError("factorial needs a whole number >= 0.")
    if n > MAX_FACTORIAL:
        raise CalcError(f"factorial is limited to n <= {MAX_FACTORIAL}.")
    return math.factorial(int(n))


def _bounded_int_fn(fn: Callable[..., int], limit: int = 100_000) -> Callable[..., int]:
    def wrapper(*args: Any) -> int:
        if any(not float(a).is_integer() or abs(a) > limit for a in args):
            raise CalcError(f"{fn.__name__} needs whole numbers up to {limit}.")
        return fn(*(int(a) for a in args))

    return wrapper


def _log(x: Any, base: Any = None) -> float:
    return math.log(x) if base is None else math.log(x, base)


def _sqrt(x: Any) -> Any:
    if _is_unit_like(x):
        return x**0.5
    if isinstance(x, int) and x >= 0:
        root = math.isqrt(x)
        if root * root == x:
            return root
    return math.sqrt(x)


def _round(x: Any, ndigits: Any = 0) -> Any:
    if not float(ndigits).is_integer() or not -20 <= ndigits <= 20:
        raise CalcError("round(x, n): n must be a whole number from -20 to 20.")
    if _is_quantity(x):
        return round(x.magnitude, int(ndigits)) * x.units
    value = round(x, int(ndigits))
    return int(value) if ndigits <= 0 and isinstance(value, float) and math.isfinite(value) else value


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sqrt": _sqrt, "cbrt": math.cbrt, "exp": math.exp, "log": _log, "ln": math.log, "log10": math.log10,
    "log2": math.log2, "sin": math.sin, "cos": math.cos, "tan": math.tan, "asin": math.asin, "acos": math.acos,
    "atan": math.atan, "atan2": math.atan2, "sinh": math.sinh, "cosh": math.cosh, "tanh": math.tanh,
    "degrees": math.degrees, "radians": math.radians, "abs": abs, "round": _round, "floor": math.floor,
    "ceil": math.ceil, "trunc": math.trunc, "factorial": _factorial, "comb": _bounded_int_fn(math.comb, 10_000),
    "perm": _bounded_int_fn(math.perm, 10_000), "gcd": _bounded_int_fn(math.gcd, 10**18),
    "lcm": _bounded_int_fn(math.lcm, 10**18), "hypot": math.hypot, "min": min, "max": max,
    "sum": lambda *a: sum(a), "mean": lambda *a: statistics.fmean(a), "avg": lambda *a: statistics.fmean(a),
    "median": lambda *a: statistics.median(a),
}  # fmt: skip
#: Functions that accept quantities with units (the rest need plain numbers).
UNIT_FUNCTIONS = frozenset({"sqrt", "abs", "round", "min", "max", "sum"})
CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau, "π": math.pi}


def _unit_class() -> Any:
    return unit_registry().Unit if unit_registry.cache_info().currsize else None


def _is_quantity(x: Any) -> bool:
    return unit_registry.cache_info().currsize > 0 and isinstance(x, unit_registry().Quantity)


def _is_unit_like(x: Any) -> bool:
    return unit_registry.cache_info().currsize > 0 and isinstance(x, unit_registry().Quantity | unit_registry().Unit)


def _plain(x: Any, what: str) -> float:
    """A dimensionless quantity as a number, else :class:`CalcError`."""
    quantity = x if _is_quantity(x) else unit_registry().Quantity(1, x)
    if not quantity.dimensionless:
        raise CalcError(f"{what} must be a plain number, not {quantity.units:~P}.")
    return float(quantity.to("dimensionless").magnitude)


_NUMBER = r"(?>\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)"


def preprocess(expression: str) -> str:
    """What users type -> Python syntax: ×÷^, N%, 'x% of y', implicit multiplication (2pi, 5 km)."""
    text = expression.strip()
    for old, new in (("×", "*"), ("÷", "/"), ("−", "-"), ("^", "**"), ("（", "("), ("）", ")"), ("，", ","),
                     ("²", "**2"), ("³", "**3"), ("℃", " degC"), ("℉", " degF"), ("°C", " degC"), ("°F", " degF"),
                     ("°", " deg"), ("µ", "u")):  # fmt: skip
        text = text.replace(old, new)
    text = re.sub(r"√\s*(\d+(?:\.\d+)?|[A-Za-z_]\w*)", r"sqrt(\1)", text)
    text = text.replace("√", "sqrt")
    text = re.sub(r"\bmod\b", "%", text)
    text = re.sub(r"(\d+(?:\.\d+)?)\s*%\s*of\b", r"(\1/100)*", text)  # 15% of 200
    text = re.sub(r"(\d+(?:\.\d+)?)\s*%(?!\s*[\w(.])", r"(\1/100)", text)  # 15% at the end or before an operator
    text = re.sub(r"\bin\b", "inch", text)  # 'in' is a Python keyword
    # "2 m / 4 m" is (2 m) / (4 m) and "3 m**2" is 3 (m**2): a number and its unit bind tighter than * and /.
    text = re.sub(
        rf"(?<![\w.])({_NUMBER})\s*((?>[A-Za-z_\u4e00-\u9fff]\w*))(?!\s*\()(\s*\*\*\s*-?\d+)?", r"(\1*\2\3)", text
    )
    text = re.sub(rf"(?<![\w.])({_NUMBER})\s*(?=[A-Za-z_\u4e00-\u9fff(])", r"\1*", text)  # 2pi, 2sin(x), 2(3+4)
    return text


def _depth(node: ast.AST, level: int = 0) -> int:
    children = list(ast.iter_child_nodes(node))
    if level > MAX_DEPTH:
        return level
    return max((_depth(c, level + 1) for c in children), default=level)


def evaluate(expression: str) -> Any:
    """The value of ``expression``: int, float or a pint Quantity. Raises :class:`CalcError`."""
    if len(expression) > MAX_CHARS:
        raise CalcError(f"The expression is longer than {MAX_CHARS} characters; split it into steps.")
    source = preprocess(expression)
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError:
        raise CalcError(
            f"'{expression}' is not a valid expression. Use numbers, + - * / ** % ( ), functions such as sqrt(2) "
            "and units such as '5 km'."
        ) from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES or _depth(tree) > MAX_DEPTH:
        raise CalcError("The expression is too complex; split it into steps.")
    try:
        value = _eval(tree.body)
    except CalcError:
        raise
    except ZeroDivisionError:
        raise CalcError("Division by zero.") from None
    except OverflowError:
        raise CalcError("The result is too large to compute.") from None
    except (ValueError, TypeError) as exc:  # math domain errors, pint dimension errors
        raise CalcError(_explain(exc)) from None
    if isinstance(value, float) and not math.isfinite(value):
        raise CalcError("The result is not a finite number (too large or undefined).")
    if _is_unit_like(value) and not _is_quantity(value):
        value = unit_registry().Quantity(1, value)
    return value


def _explain(exc: Exception) -> str:
    text = str(exc)
    if "math domain" in text:
        return "A function got a value outside its domain (e.g. sqrt or log of a negative number)."
    if "Cannot convert" in text or "dimension" in text.lower():
        return f"Incompatible units: {text}."
    return f"Cannot compute that: {text}."


def _eval(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise CalcError(f"Only numbers are allowed, not {node.value!r}.")
        return _checked_int(node.value) if isinstance(node.value, int) else node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd | ast.USub):
        value = _eval(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in BINOPS:
        left, right = _eval(node.left), _eval(node.right)
        result = BINOPS[type(node.op)](left, right)
        return _checked_int(result) if isinstance(result, int) else result
    if isinstance(node, ast.Name):
        return _name(node.id)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        name = node.func.id
        fn = FUNCTIONS.get(name)
        if fn is None:
            raise CalcError(f"Unknown function '{name}'. Available: {', '.join(sorted(FUNCTIONS))}.")
        args = [_eval(a) for a in node.args]
        if name not in UNIT_FUNCTIONS:
            args = [_plain(a, f"The argument of {name}") if _is_unit_like(a) else a for a in args]
        result = fn(*args)
        return _checked_int(result) if isinstance(result, int) else result
    raise CalcError(
        f"'{ast.unparse(node)}' is not allowed. Use numbers, + - * / // % ** ( ), math functions, constants and units."
    )


def _name(name: str) -> Any:
    if name in CONSTANTS:
        return CONSTANTS[name]
    if name in FUNCTIONS:
        raise CalcError(f"'{name}' is a function: write {name}(x).")
    if name.lower() in CURRENCIES:
        raise CurrencyError()
    return parse_unit(name)


class CurrencyError(CalcError):
    def __init__(self) -> None:
        super().__init__(
            "Currency conversion needs today's exchange rates, which the calculator does not have (it works "
            "offline). Look up the current rate with web_search, then calculate with that number."
        )


def parse_unit(name: str) -> Any:
    """A pint Unit for a unit name or unit expression (``km``, ``公里``, ``km/h``)."""
    import pint

    ureg = unit_registry()
    mapped = CHINESE_UNITS.get(name.strip(), name.strip())
    if mapped.lower() in CURRENCIES:
        raise CurrencyError()
    try:
        return ureg.parse_units(preprocess(mapped))
    except (pint.errors.UndefinedUnitError, pint.errors.DefinitionSyntaxError, AttributeError, ValueError, TypeError):
        raise CalcError(
            f"Unknown name or unit '{name}'. Use constants (pi, e), functions (sqrt, sin, log, ...) or units "
            "such as m, km, ft, kg, lb, degC, degF, L, kWh, GB."
        ) from None
