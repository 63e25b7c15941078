"""Sail's known failures name the model's line and what Spark would do (issue 66 item 4)."""

from __future__ import annotations

import pytest

from dbt.adapters.sparkdelta.configs.engine_limits import explain

HEAD = (
    '/* {"app": "dbt", "node_id": "model.tpch.q18"} */\n\n  \n    \n'
    "        create or replace table tpch.q18\n      \n    using delta\n"
    "    location '/w/tpch/q18'\n      \n\n      as\n      "
)


def _statement(model: str) -> str:
    return HEAD + model + "\n  "


@pytest.mark.parametrize(
    ("model", "message", "line", "spark"),
    [
        (
            "\n-- Q18\nwith large as (\n  select order_key, sum(quantity) as quantity\n"
            "  from t\n  group by order_key\n  having sum(quantity) > 300\n)\nselect * from large",
            "Aggregate function calls cannot be nested: 'sum(t.#14)' is nested inside "
            "'sum(sum(t.#14) AS quantity)'",
            "line 7 of the model's compiled SQL: having sum(quantity) > 300",
            "Spark 4.2 reads the input column",
        ),
        (
            "select\n  p.k,\n  round(s.supply / nullif(coalesce(d.demand, 0), 0), 2) as ratio\n"
            "from p",
            "Invalid argument error: Invalid comparison operation: Decimal128(35, 2) == "
            "Decimal128(25, 2)",
            "line 3 of the model's compiled SQL: round(s.supply / nullif(",
            "Spark 4.2 widens both sides",
        ),
        (
            "with g as (select k, v from t)\nselect k, sum(v) from g group by k\n"
            "having sum(v) > (select sum(v) * 0.0001 from g)",
            'No field named g."#7". Did you mean \'g."#8"\'?',
            "line 3 of the model's compiled SQL: having sum(v) > (select",
            "Join the subquery's value",
        ),
        (  # a window over an aggregate, ordered by an expression of the GROUP BY
            "select\n  date_trunc('month', d) as m,\n  sum(x) as total,\n"
            "  lag(sum(x)) over (order by date_trunc('month', d)) as prev\nfrom t\ngroup by 1",
            'No field named t."#47". Did you mean \'"sum(t.#54)"\'?',
            "line 4 of the model's compiled SQL: lag(sum(x)) over (order by",
            "Spark 4.2 matches the expression to the grouping",
        ),
        (  # decimals compared where no nullif is: the windowed sum beside the sums
            "with r as (select k, sum(v) as total from t group by k)\nselect\n  k,\n"
            "  sum(total) over () as grand,\n  total / grand as share\nfrom r",
            "Invalid comparison operation: Decimal128(38, 4) == Decimal128(36, 4)",
            "line 4 of the model's compiled SQL: sum(total) over () as grand,",
            "Spark 4.2 widens both sides",
        ),
        (
            "select\n  l.price as base_price,\n  base_price * 2 as doubled\nfrom l",
            'attribute ObjectName([Identifier("base_price")]) is missing from the schema',
            "line 3 of the model's compiled SQL: base_price * 2 as doubled",
            "Spark 3.4+ does",
        ),
    ],
)
def test_a_known_limit_names_the_line_and_spark(
    model: str, message: str, line: str, spark: str
) -> None:
    said = explain(_statement(model), message)
    assert line in said
    assert spark in said
    assert said.endswith("(docs/known-limits.md)")


def test_other_errors_get_nothing() -> None:
    assert explain(_statement("select 1"), "Table or view not found: x") == ""
