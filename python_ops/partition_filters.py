"""Partition predicates as Delta writers take them: ``col op literal`` terms joined by AND.

``order_date >= '2024-06-01' AND country IN ('DE', 'FR')`` becomes
``[("order_date", ">=", "2024-06-01"), ("country", "in", ["DE", "FR"])]``, the form delta-rs's
``partition_filters`` accept, and can be evaluated against a file's partition values.
"""

from __future__ import annotations

import re
from typing import Any

from python_ops.errors import ConfigError

Filter = tuple[str, str, Any]

_OPS = ("<=", ">=", "!=", "<>", "=", "<", ">")
_TERM = re.compile(
    r"^\s*(?P<col>`[^`]+`|[A-Za-z_][A-Za-z0-9_ ]*?)\s*"
    r"(?P<op><=|>=|!=|<>|=|<|>|\bnot\s+in\b|\bin\b)\s*(?P<value>.+?)\s*$",
    re.IGNORECASE | re.DOTALL,
)
_LITERAL = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"|(-?\d+(?:\.\d+)?)")
_NUMERIC = {"byte", "short", "integer", "long", "float", "double"}


def _literal(text: str, *, setting: str, predicate: str) -> str:
    m = _LITERAL.fullmatch(text.strip())
    if not m:
        raise ConfigError(
            setting=setting,
            value=predicate,
            fix=f"'{text.strip()}' is not a literal; quote strings and dates, e.g. "
            "order_date = '2024-06-01'.",
        )
    return next(g for g in m.groups() if g is not None)


def parse_partition_predicate(
    predicate: str,
    *,
    partition_columns: tuple[str, ...],
    columns: list[str],
    setting: str = "where",
    model: str | None = None,
) -> list[Filter]:
    """Parse a conjunction of comparisons on partition columns.

    Args:
        predicate: e.g. ``order_date >= '2024-06-01' AND country IN ('DE', 'FR')``.
        partition_columns: The table's partition columns.
        columns: All of the table's columns (to tell a non-partition column from a typo).
        setting: Name of the setting, for errors.
        model: The dbt model, for errors.

    Returns:
        Filters ``(column, operator, value)``; ``in``/``not in`` values are lists.

    Raises:
        ConfigError: When the predicate cannot be parsed or names a non-partition column.
    """
    allowed = ", ".join(partition_columns) or "(none: the table is not partitioned)"
    filters: list[Filter] = []
    for term in re.split(r"\s+and\s+", predicate.strip(), flags=re.IGNORECASE):
        m = _TERM.match(term)
        if not m:
            raise ConfigError(
                setting=setting,
                value=predicate,
                fix="Write comparisons of partition columns joined by AND, e.g. "
                f"\"{partition_columns[0] if partition_columns else 'day'} >= '2024-06-01'\".",
                model=model,
            )
        column = m["col"].strip().strip("`")
        if column not in partition_columns:
            kind = "a non-partition column" if column in columns else "not a column of the table"
            raise ConfigError(
                setting=setting,
                value=predicate,
                fix=f"'{column}' is {kind}; only partition columns may be used: {allowed}.",
                model=model,
            )
        op = " ".join(m["op"].lower().split())
        raw = m["value"].strip()
        value: Any
        if op in ("in", "not in"):
            if not (raw.startswith("(") and raw.endswith(")")):
                raise ConfigError(
                    setting=setting,
                    value=predicate,
                    fix="Write IN lists as ('a', 'b').",
                    model=model,
                )
            value = [
                _literal(v, setting=setting, predicate=predicate)
                for v in re.split(r",(?=(?:[^']*'[^']*')*[^']*$)", raw[1:-1])
            ]
        else:
            value = _literal(raw, setting=setting, predicate=predicate)
            op = "!=" if op == "<>" else op
        filters.append((column, op, value))
    return filters


def matches(filters: list[Filter], values: dict[str, str | None], types: dict[str, Any]) -> bool:
    """Whether a file's partition values satisfy every filter (typed comparison).

    Args:
        filters: Parsed filters.
        values: The file's partition values (strings; None for null).
        types: Delta type of each partition column (numeric columns compare as numbers).

    Returns:
        True when all filters hold; comparisons with null are false, as in SQL.
    """

    def typed(column: str, v: str) -> Any:
        return float(v) if types.get(column) in _NUMERIC else v

    for column, op, value in filters:
        actual = values.get(column)
        if actual is None:
            return False
        left = typed(column, actual)
        if op in ("in", "not in"):
            found = left in [typed(column, v) for v in value]
            if found != (op == "in"):
                return False
            continue
        right = typed(column, value)
        ok = {
            "=": left == right,
            "!=": left != right,
            "<": left < right,
            "<=": left <= right,
            ">": left > right,
            ">=": left >= right,
        }[op]
        if not ok:
            return False
    return True
