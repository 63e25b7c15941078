"""Sail's known failures on SQL Spark runs: the model's own line and what Spark would do.

The embedded engine (Sail 0.7) fails some SQL that Apache Spark 4.2 runs (docs/known-limits.md)
with a message about its own plan (``'sum(tpch.t.#14)' is nested inside ...``), no line of the
model. For each such failure this names the line of the model's compiled SQL that holds the
construct (found in the statement dbt sent: the model's SQL follows the ``as`` of dbt's
``create ... table``), what Spark does with it, and how to write it so both engines run it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

LineFinder = Callable[["re.Match[str]"], tuple[str, ...]]  # the error -> line patterns, in order


@dataclass(frozen=True)
class KnownLimit:
    """One Sail failure: its message, where in the model it is, what Spark does instead."""

    message: re.Pattern[str]
    line: LineFinder
    spark: str


def _having_alias(match: re.Match[str]) -> tuple[str, ...]:
    alias = re.escape(match.group("alias"))
    return (rf"(?i)\bhaving\b.*\(\s*{alias}\s*\)",)


def _lateral_alias(match: re.Match[str]) -> tuple[str, ...]:
    name = re.escape(match.group("alias"))
    return (rf"(?i)(?<!\bas )\b{name}\b(?!\s*,?\s*$)",)


AGGREGATE = r"(sum|avg|min|max|count)\s*\("
LIMITS = (
    KnownLimit(
        re.compile(r"is nested inside '\w+\(\w+\(.*\) AS (?P<alias>\w+)\)'"),
        _having_alias,
        "Sail 0.7 reads the name in HAVING as the output alias (an aggregate); Spark 4.2 reads "
        "the input column of that name and runs it. Name the aggregate differently.",
    ),
    KnownLimit(
        re.compile(r"Invalid comparison operation: Decimal128\(\d+, \d+\) \S+ Decimal128"),
        lambda _m: (
            r"(?i)\bnullif\s*\(",
            rf"(?i)\b{AGGREGATE}.*\)\s*over\s*\(",
            r"(?i)\b(coalesce|sum|avg|round)\s*\(.*(?<![<>!])=(?!>)",
        ),
        "Sail 0.7 compares decimals only of one precision (here a decimal beside a wider one, as "
        "a sum beside a sum of it); Spark 4.2 widens both sides to one decimal type and runs it. "
        "Cast both sides to one decimal type.",
    ),
    KnownLimit(
        re.compile(r"No field named \S+?\.?(\s|$)"),
        lambda _m: (rf"(?i)\b\w+\s*\(\s*{AGGREGATE}.*\bover\s*\(",),
        "Sail 0.7 does not resolve a window function over an aggregate ordered or partitioned by "
        "an expression of the GROUP BY (lag(sum(x)) over (order by date_trunc('month', d)) ... "
        "group by 1); Spark 4.2 matches the expression to the grouping and runs it. Compute the "
        "aggregate in a CTE, then the window over its columns.",
    ),
    KnownLimit(
        re.compile(r"No field named \S+?\.?(\s|$)"),
        lambda _m: (r"(?i)\bhaving\b.*\(\s*select\b",),
        "Sail 0.7 does not resolve a scalar subquery over a CTE in HAVING; Spark 4.2 runs it. "
        "Join the subquery's value instead.",
    ),
    KnownLimit(
        re.compile(r'attribute ObjectName\(\[Identifier\("(?P<alias>\w+)"\)\]\) is missing'),
        _lateral_alias,
        "Sail 0.7 does not resolve a column alias defined earlier in the same SELECT (a "
        "lateral column alias); Spark 3.4+ does. Repeat the expression.",
    ),
)


def _model_sql(statement: str) -> str:
    """The model's compiled SQL in dbt's statement: what follows the ``as`` line of its create.

    dbt-spark writes ``as`` on a line of its own, then the compiled code (indented on its first
    line only), so the lines from there are the compiled SQL's own lines.
    """
    found = re.search(r"(?is)\bcreate\b.*?\btable\b.*?\n[ \t]*as[ \t]*\n", statement)
    return statement if found is None else statement[found.end() :]


def _line(sql: str, patterns: tuple[str, ...]) -> str:
    """The first line of ``sql`` the first pattern that finds one finds, with its number."""
    lines = sql.splitlines()
    for pattern in patterns:
        for number, text in enumerate(lines, start=1):
            if re.search(pattern, text):
                return f"line {number} of the model's compiled SQL: {text.strip()}\n"
    return ""


def explain(statement: str, message: str) -> str:
    """What to add to the embedded engine's ``message`` for a known limit ('' for none).

    The first limit whose message matches and whose construct is found in the model wins;
    else the first whose message matches, without a line.

    Args:
        statement: The SQL dbt sent.
        message: The engine's error message.

    Returns:
        Lines naming the model's line (of its compiled SQL), what Spark does and the fix.
    """
    sql = _model_sql(statement)
    matching = [(limit, m) for limit in LIMITS if (m := limit.message.search(message))]
    for limit, match in matching:
        where = _line(sql, limit.line(match))
        if where:
            return f"\n{where}{limit.spark} (docs/known-limits.md)"
    if matching:
        return f"\n{matching[0][0].spark} (docs/known-limits.md)"
    return ""
