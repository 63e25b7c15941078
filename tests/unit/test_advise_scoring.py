"""The advisor's scoring (issue 66 item 1): constants read from SQL, the reads they make, and the
layout chosen by the files those reads would skip on a sample of the table."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake
from sqlglot import parse_one

from python_ops.advise.bounds import NOT_CONSTANT, Bounds, value_of
from python_ops.advise.layouts import LayoutModel, files_admitting
from python_ops.advise.predicates import PredicateKind, QueryReader, Relation, Scan, ScanPredicate
from python_ops.advise.scoring import NEAR_FULL, WeightedScan, choose, reader_weight
from python_ops.delta.state.snapshot import read_snapshot
from python_ops.maintenance.configuration.config import parse_config

FCT = "model.p.fct"
DIM = "model.p.dim"


@pytest.fixture
def reader() -> QueryReader:
    return QueryReader(
        {
            ("s", "fct"): Relation(FCT, True, ("k", "day", "qty", "flag")),
            ("s", "dim"): Relation(DIM, True, ("k", "name")),
        }
    )


def _value(sql: str) -> object:
    return value_of(parse_one(f"select {sql}", read="spark").selects[0])


def test_constants_are_evaluated_or_refused() -> None:
    assert _value("date '1994-01-01'") == dt.date(1994, 1, 1)
    assert _value("cast('1998-12-01' as date) - interval 90 day") == dt.date(1998, 9, 2)
    assert _value("date '1994-01-31' + interval '1' month") == dt.date(1994, 2, 28)
    assert _value("add_months(date '1994-01-01', 3)") == dt.date(1994, 4, 1)
    assert _value("-24") == -24
    assert _value("0.05") == 0.05
    assert _value("current_date()") is NOT_CONSTANT


def test_bounds_intersect_conjuncts_on_one_column() -> None:
    low = Bounds(low=dt.date(1994, 1, 1))
    high = Bounds(high=dt.date(1995, 1, 1), high_open=True)
    both = low.intersect(high)
    assert both == Bounds(dt.date(1994, 1, 1), dt.date(1995, 1, 1), False, True)
    assert both.describe() == "[1994-01-01, 1995-01-01)"


def _scans(reader: QueryReader, sql: str) -> dict[str, dict[str, ScanPredicate]]:
    reading = reader.read(sql)
    assert not reading.problems, reading.problems
    return {s.model: {p.column: p for p in s.predicates} for s in reading.scans}


def test_a_read_holds_the_conjuncts_with_constants(reader: QueryReader) -> None:
    scans = _scans(
        reader,
        "select * from s.fct where day >= date '1994-01-01' and day < date '1995-01-01' "
        "and qty between 1 and 5 and flag in ('A', 'C') and upper(flag) = 'A'",
    )
    fct = scans[FCT]
    assert set(fct) == {"day", "qty", "flag"}
    assert fct["day"].bounds == Bounds(dt.date(1994, 1, 1), dt.date(1995, 1, 1), False, True)
    assert fct["qty"].bounds == Bounds(1, 5)
    assert (fct["flag"].kind, fct["flag"].bounds) == (PredicateKind.IN, Bounds("A", "C"))


def test_null_safe_equality_is_an_equality(reader: QueryReader) -> None:
    scans = _scans(reader, "select * from s.fct where flag <=> 'A'")
    assert scans[FCT]["flag"] == ScanPredicate("flag", PredicateKind.EQUALITY, Bounds("A", "A"))


def test_predicates_under_or_make_no_read(reader: QueryReader) -> None:
    assert _scans(reader, "select * from s.fct where qty = 1 or day = date '1994-01-01'") == {}


def test_a_join_counts_only_through_a_constant_it_carries(reader: QueryReader) -> None:
    carried = _scans(reader, "select * from s.fct f join s.dim d on f.k = d.k where d.k = 5")
    assert carried[FCT]["k"] == ScanPredicate("k", PredicateKind.JOIN, Bounds(5, 5))
    other = _scans(reader, "select * from s.fct f join s.dim d on f.k = d.k where d.name = 'x'")
    assert FCT not in other  # the keys that side keeps are not known without running it


def test_never_through_an_aggregate(reader: QueryReader) -> None:
    sql = (
        "with a as (select k, sum(qty) as q from s.fct group by k) "
        "select * from a join s.dim d on a.k = d.k where d.k = 5"
    )
    assert FCT not in _scans(reader, sql)


def test_reader_weight_from_meta_or_tags() -> None:
    assert reader_weight({"config": {}}) == 1.0
    assert reader_weight({"tags": ["weekly"]}) == pytest.approx(1 / 7)
    monthly = {"config": {"meta": {"maintenance_reader_frequency": "monthly"}}}
    assert reader_weight(monthly) == pytest.approx(1 / 30)
    assert reader_weight({"meta": {"maintenance_reader_frequency": 0.5}}) == 0.5
    # in meta, not a maintenance setting: a model's config check does not refuse it
    assert parse_config("m", monthly["config"]).zorder_by == ()


@pytest.fixture
def table(tmp_path: Path) -> str:
    """4,000 rows: ``day`` over 1,000 days, ``qty`` independent of it, ``flag`` 2 values."""
    n = 4000
    days = [dt.date(1994, 1, 1) + dt.timedelta(days=(i * 7919) % 1000) for i in range(n)]
    rows = pa.table(
        {
            "day": pa.array(days, pa.date32()),
            "qty": pa.array([(i * 31) % 50 for i in range(n)], pa.int64()),
            "flag": pa.array(["A" if i % 2 else "B" for i in range(n)]),
        }
    )
    location = str(tmp_path / "fct")
    write_deltalake(location, rows)
    return location


def _range(column: str, low: object, high: object) -> ScanPredicate:
    return ScanPredicate(column, PredicateKind.RANGE, Bounds(low, high, high_open=True))


def _read(name: str, *predicates: ScanPredicate, weight: float = 1.0) -> WeightedScan:
    return WeightedScan(name, weight, Scan(FCT, predicates))


def test_the_layout_its_reads_skip_most_under(table: str) -> None:
    snapshot = read_snapshot(table, with_stats=True)
    size = sum(f.size_bytes for f in snapshot.files)
    model = LayoutModel(snapshot, ["day", "qty", "flag"], -(-size // 20))
    assert model.files_after == 20
    month = _range("day", dt.date(1995, 3, 1), dt.date(1995, 4, 1))
    small = _range("qty", 0, 5)
    reads = [_read("by_month", month), _read("by_month_too", month), _read("small", small)]
    # every run each: a Z-order on both skips more in all (a quarter of the files each)
    assert choose(model, reads, ["day", "qty", "flag"]).layout == ("day", "qty")
    weekly = [*reads[:2], _read("small", small, weight=1 / 7)]
    choice = choose(model, weekly, ["day", "qty", "flag"])
    assert choice.layout == ("day",)  # the qty reader runs weekly: day alone skips more
    shares = {r.reader: (r.share_now, r.share_after) for r in choice.reads}
    assert shares["by_month"][0] == 1.0  # one file now
    assert shares["by_month"][1] <= 0.1
    assert choose(model, [_read("q", small)], ["day", "qty"]).layout == ("qty",)


def test_near_full_and_incomparable_predicates_count_nothing(table: str) -> None:
    snapshot = read_snapshot(table, with_stats=True)
    model = LayoutModel(snapshot, ["day", "flag"], 1024)
    almost_all = ScanPredicate("day", PredicateKind.RANGE, Bounds(high=dt.date(1996, 9, 1)))
    assert (model.selectivity(almost_all) or 0) >= NEAR_FULL
    wrong_type = ScanPredicate("flag", PredicateKind.EQUALITY, Bounds(dt.date(1994, 1, 1), None))
    choice = choose(model, [_read("all", almost_all), _read("bad", wrong_type)], ["day", "flag"])
    assert choice.layout == ()
    ignored = [i for r in choice.reads for i in r.ignored]
    assert any("near-full" in i for i in ignored)


def test_files_admitting_counts_from_the_files_statistics(table: str) -> None:
    snapshot = read_snapshot(table, with_stats=True)
    scan = Scan(FCT, (_range("day", dt.date(1990, 1, 1), dt.date(1990, 2, 1)),))
    assert files_admitting(snapshot, scan) == 0
    assert files_admitting(snapshot, Scan(FCT, ())) == len(snapshot.files)


def test_auto_keeps_its_last_choice_while_it_ties_the_best() -> None:
    from python_ops.advise.advisor import ModelAdvice, steady_columns

    advice = ModelAdvice(
        "fct",
        FCT,
        None,
        ("day",),
        (),
        layout_scores={"day": 0.86, "qty": 0.2, "day,qty": 1.0},
        scored=True,
        tie=0.43,
    )
    assert steady_columns(advice, ("qty", "day")) == ("qty", "day")  # any column order
    assert steady_columns(advice, ("qty",)) == ("day",)  # 0.2 is no tie of 0.86
    assert steady_columns(advice, None) == ("day",)
