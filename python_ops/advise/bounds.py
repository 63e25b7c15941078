"""The values a predicate admits: constants evaluated from SQL, kept as a closed or open range.

A predicate's constant is evaluated here when it is a literal, a cast of one (``date
'1994-01-01'``, ``cast('1998-12-01' as date)``), a date plus or minus an interval of days,
months or years, ``date_add``/``date_sub``/``add_months`` of a date, or a negation. Anything else
(a function of a column, a subquery, a variable the SQL does not fix) is not evaluated: the
predicate is then no evidence of what a file's statistics could skip.

``Bounds`` is what the predicate admits: ``col = c`` is [c, c]; ``col IN (a, b, c)`` is its
smallest to its largest value (Delta skips an IN list by those two only); ``col BETWEEN a AND
b`` is [a, b]; ``<``, ``<=``, ``>``, ``>=`` are open on one side. Conjuncts on one column are
intersected.
"""

from __future__ import annotations

import calendar
import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

NOT_CONSTANT = object()  # what ``value_of`` answers for an expression it does not evaluate


@dataclass(frozen=True)
class Bounds:
    """The values of one column a predicate admits (None: unbounded on that side).

    Attributes:
        low: The smallest value admitted (None: no lower bound).
        high: The largest value admitted (None: no upper bound).
        low_open: Whether ``low`` itself is excluded (``>``).
        high_open: Whether ``high`` itself is excluded (``<``).
    """

    low: Any = None
    high: Any = None
    low_open: bool = False
    high_open: bool = False

    def intersect(self, other: Bounds) -> Bounds:
        """The values both admit (the tighter bound on each side; on incomparable values, ours)."""
        low, low_open = self.low, self.low_open
        high, high_open = self.high, self.high_open
        try:
            if other.low is not None and (
                low is None or other.low > low or (other.low == low and other.low_open)
            ):
                low, low_open = other.low, other.low_open
            if other.high is not None and (
                high is None or other.high < high or (other.high == high and other.high_open)
            ):
                high, high_open = other.high, other.high_open
        except TypeError:
            return self
        return Bounds(low, high, low_open, high_open)

    def describe(self) -> str:
        """The bounds in words (``[1994-01-01, 1995-01-01)``)."""
        left = "(" if self.low_open or self.low is None else "["
        right = ")" if self.high_open or self.high is None else "]"
        low = "-inf" if self.low is None else str(self.low)
        high = "+inf" if self.high is None else str(self.high)
        return f"{left}{low}, {high}{right}"


def _add_months(day: dt.date, months: int) -> dt.date:
    month0 = day.month - 1 + months
    year, month = day.year + month0 // 12, month0 % 12 + 1
    return day.replace(
        year=year, month=month, day=min(day.day, calendar.monthrange(year, month)[1])
    )


def _shift(day: Any, amount: Any, unit: str) -> Any:
    """``day`` moved by ``amount`` units (DAY, WEEK, MONTH, YEAR), or NOT_CONSTANT."""
    if not isinstance(day, dt.date) or isinstance(amount, bool):
        return NOT_CONSTANT
    try:
        count = int(amount)
    except (TypeError, ValueError):
        return NOT_CONSTANT
    unit = unit.upper().rstrip("S")
    if unit == "DAY":
        return day + dt.timedelta(days=count)
    if unit == "WEEK":
        return day + dt.timedelta(weeks=count)
    if unit == "MONTH":
        return _add_months(day, count)
    if unit == "YEAR":
        return _add_months(day, 12 * count)
    return NOT_CONSTANT


def _cast(value: Any, to: exp.DataType) -> Any:
    if value is NOT_CONSTANT or value is None:
        return value
    try:
        if to.is_type(exp.DataType.Type.DATE):
            return value if isinstance(value, dt.date) else dt.date.fromisoformat(str(value))
        if to.is_type(*exp.DataType.TEMPORAL_TYPES):
            return dt.datetime.fromisoformat(str(value))
        if to.is_type(*exp.DataType.INTEGER_TYPES):
            return int(value)
        if to.is_type(*exp.DataType.REAL_TYPES):
            return float(value)
        if to.is_type(*exp.DataType.TEXT_TYPES):
            return str(value)
    except (TypeError, ValueError):
        return NOT_CONSTANT
    return NOT_CONSTANT


def _literal(node: exp.Literal) -> Any:
    if node.is_string:
        return str(node.this)
    text = str(node.this)
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return NOT_CONSTANT


def _interval(node: exp.Interval) -> tuple[Any, str] | None:
    unit = node.args.get("unit")
    amount = value_of(node.this) if node.this is not None else NOT_CONSTANT
    if unit is None or amount is NOT_CONSTANT:
        return None
    return amount, unit.name


def _arithmetic(node: exp.Add | exp.Sub) -> Any:
    left = value_of(node.this)
    sign = -1 if isinstance(node, exp.Sub) else 1
    if isinstance(node.expression, exp.Interval):
        found = _interval(node.expression)
        if found is None:
            return NOT_CONSTANT
        try:
            return _shift(left, sign * int(found[0]), found[1])
        except (TypeError, ValueError):
            return NOT_CONSTANT
    right = value_of(node.expression)
    if isinstance(left, (int, float)) and isinstance(right, (int, float)):
        return left + sign * right
    return NOT_CONSTANT


def value_of(node: exp.Expression) -> Any:
    """The value of a constant expression, or ``NOT_CONSTANT`` when it is not evaluated here."""
    if isinstance(node, exp.Paren):
        return value_of(node.this)
    if isinstance(node, exp.Literal):
        return _literal(node)
    if isinstance(node, (exp.Cast, exp.TryCast)):
        return _cast(value_of(node.this), node.to)
    if isinstance(node, exp.Neg):
        inner = value_of(node.this)
        return -inner if isinstance(inner, (int, float)) else NOT_CONSTANT
    if isinstance(node, (exp.Add, exp.Sub)):
        return _arithmetic(node)
    if isinstance(node, (exp.TsOrDsAdd, exp.DateAdd, exp.DateSub, exp.AddMonths)):
        unit = "MONTH" if isinstance(node, exp.AddMonths) else node.text("unit") or "DAY"
        amount = value_of(node.expression)
        if isinstance(node, exp.DateSub) and isinstance(amount, (int, float)):
            amount = -amount
        return _shift(value_of(node.this), amount, unit)
    return NOT_CONSTANT


def comparison(op: type[exp.Expression], value: Any, *, column_on_left: bool) -> Bounds:
    """The bounds of ``col <op> value`` (or ``value <op> col``)."""
    flipped: dict[type[exp.Expression], type[exp.Expression]] = {
        exp.GT: exp.LT,
        exp.GTE: exp.LTE,
        exp.LT: exp.GT,
        exp.LTE: exp.GTE,
    }
    if not column_on_left:
        op = flipped.get(op, op)
    if op is exp.GT:
        return Bounds(low=value, low_open=True)
    if op is exp.GTE:
        return Bounds(low=value)
    if op is exp.LT:
        return Bounds(high=value, high_open=True)
    if op is exp.LTE:
        return Bounds(high=value)
    return Bounds(value, value)
