"""The advisor's SQL reading (sqlglot's Spark dialect): each predicate kind, each way a column
is followed to a maintained table, and each case it reports instead of guessing."""

from __future__ import annotations

import pytest

from python_ops.advise.predicates import PredicateKind, QueryReader, Relation
from python_ops.maintenance.configuration.config import parse_config

FCT = "model.p.fct_orders"
COLUMNS = ("order_id", "customer_id", "amount", "status", "order_date")


@pytest.fixture
def reader() -> QueryReader:
    return QueryReader(
        {
            ("shop", "fct_orders"): Relation(FCT, True, COLUMNS),
            ("shop", "dim_customers"): Relation("model.p.dim_customers", True, ("customer_id",)),
            ("raw", "ext"): Relation("source.p.raw.ext", False),
            ("shop", "v_orders"): Relation(
                "model.p.v_orders",
                False,
                None,
                "select order_id as id, status, amount * 2 as amt from shop.fct_orders",
            ),
        }
    )


def _uses(reader: QueryReader, sql: str) -> set[tuple[str, str]]:
    reading = reader.read(sql)
    assert not reading.problems, reading.problems
    return {(u.column, str(u.kind)) for u in reading.uses if u.model == FCT}


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("select * from shop.fct_orders where status = 'open'", {("status", "equality")}),
        ("select * from shop.fct_orders where 5 = order_id", {("order_id", "equality")}),
        ("select * from shop.fct_orders f where f.order_id in (1, 2)", {("order_id", "in")}),
        (
            "select * from shop.fct_orders where order_date between '2024-01-01' and '2024-02-01'",
            {("order_date", "range")},
        ),
        ("select * from shop.fct_orders where amount >= 10", {("amount", "range")}),
        (  # through a CTE renaming it and an alias
            "with o as (select customer_id as cid from shop.fct_orders) "
            "select * from o as x join shop.dim_customers d on x.cid = d.customer_id",
            {("customer_id", "join")},
        ),
        (  # a derived table
            "select * from (select order_id as oid from shop.fct_orders) s where s.oid < 3",
            {("order_id", "range")},
        ),
        (  # a union, column by position
            "select * from (select order_id as a from shop.fct_orders union all "
            "select customer_id from shop.fct_orders) u where u.a = 1",
            {("order_id", "equality"), ("customer_id", "equality")},
        ),
        (  # a view the project builds
            "select * from shop.v_orders v where v.id = 3 and v.amt > 2",
            {("order_id", "equality")},
        ),
        (
            "select * from shop.fct_orders where customer_id in "
            "(select customer_id from shop.dim_customers)",
            {("customer_id", "join")},
        ),
        (
            "select * from shop.fct_orders join shop.dim_customers using (customer_id)",
            {("customer_id", "join")},
        ),
        ("select * from shop.fct_orders where upper(status) = 'OPEN'", set()),  # an expression
    ],
)
def test_each_predicate_kind_and_path(reader: QueryReader, sql: str, expected: set) -> None:
    assert _uses(reader, sql) == expected


@pytest.mark.parametrize(
    ("sql", "problem"),
    [
        ("selec * frm where", "unparsable SQL"),
        (
            "select * from raw.ext x join shop.fct_orders f on x.k = f.order_id where flag = 1",
            "an ambiguous column",
        ),
        ("select * from (select * from raw.ext, shop.fct_orders) s where s.k = 1", "SELECT *"),
    ],
)
def test_what_it_cannot_resolve_is_reported(reader: QueryReader, sql: str, problem: str) -> None:
    reading = reader.read(sql)
    assert any(problem in p for p in reading.problems), reading.problems


def test_uses_are_kinds() -> None:
    assert {k.value for k in PredicateKind} == {"equality", "in", "range", "join"}


def test_auto_is_a_mode_not_a_column() -> None:
    c = parse_config("m", {"maintenance_zorder_by": "auto"})
    assert (c.zorder_by, c.zorder_auto, c.interval_hours("optimize")) == ((), True, 24.0)
    listed = parse_config("m", {"maintenance_zorder_by": ["auto"]})
    assert (listed.zorder_by, listed.zorder_auto) == (("auto",), False)
    clustered = parse_config("m", {"maintenance_cluster_by": "AUTO"})
    assert (clustered.cluster_by, clustered.cluster_auto) == ((), True)
