"""A created table's one proof (``empty_origin``): what both bounds read back from it, and no more.

Over generated build times, retentions, decision times, table ids, locations, later records of
the other proofs and malformed parameters, on real history tables (delta-rs), written and read
back as a later command reads them:

- the untracked bound it gives is the one emptiness proves (``B + R``), held only before then,
  only at its location, and never later than a listing's record that still holds;
- the log bounds it gives belong to the table created then only, and a decision's own
  ``log_bounds`` record of the same table comes first;
- a record this version cannot read gives nothing (the rules list or read the snapshot), and
  nothing raises.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.records.history import HistoryStore, defer_proof
from python_ops.maintenance.rules.empty_origin import (
    ORIGIN_OP,
    EmptyOrigin,
    record_origin,
    recorded_origin,
)
from python_ops.maintenance.rules.log_bounds import LogBounds, keep_bounds, recorded_bounds
from python_ops.maintenance.rules.reclaim import trusted_bound
from python_ops.maintenance.rules.untracked_bound import UntrackedBound, record_bound
from python_ops.maintenance.selection.targets import ModelTarget

HOUR, DAY = 3_600_000, 86_400_000
T0 = 1_800_000_000_000
IDS = ("table-a", "table-b")
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _target(location: str) -> ModelTarget:
    return ModelTarget("orders", location, parse_config("orders", {"materialized": "table"}))


def _read_back(history: HistoryStore) -> HistoryStore:
    """The rows as the next command reads them: flushed, then a new store on the same table."""
    history.flush()
    return HistoryStore(history.location)


@SETTINGS
@given(
    empty_at=st.integers(T0, T0 + DAY),
    retention_h=st.sampled_from([0.5, 1, 24, 168, 720]),
    after=st.integers(0, 60 * DAY),
    elsewhere=st.booleans(),
    listed=st.none() | st.tuples(st.integers(0, 30 * DAY), st.integers(0, 30 * DAY)),
)
def test_the_untracked_bound_is_what_emptiness_proves(
    empty_at: int,
    retention_h: float,
    after: int,
    elsewhere: bool,
    listed: tuple[int, int] | None,
) -> None:
    with tempfile.TemporaryDirectory() as root:
        table = _target(f"{root}/orders")
        history = HistoryStore(f"{root}/history")
        record_origin(history, table, EmptyOrigin("table-a", empty_at), invocation_id="b1")
        if listed is not None:  # a later listing's record: listed at L, bounded at L + delay
            at, delay = empty_at + listed[0], listed[1]
            bound = UntrackedBound(at, at + delay, retention_h)
            record_bound(history, table, bound, invocation_id="b2")
        history = _read_back(history)
        now = empty_at + after
        asked = _target(f"{root}/other") if elsewhere else table
        got, proof = trusted_bound(history, asked, retention_h, now_ms=now, empty_at_ms=None)
        if elsewhere:  # another location's facts bound nothing here
            assert got is None
            assert proof == ""
            return
        retention_ms = round(retention_h * HOUR)
        by_listing = listed is not None and now < empty_at + listed[0] + listed[1]
        if by_listing:  # a listing's record that holds comes first
            assert got is not None
            assert proof.startswith("listed ")
        elif now < empty_at + retention_ms:
            assert got == UntrackedBound(empty_at, empty_at + retention_ms, retention_h)
            assert "where nothing existed" in proof
        else:  # passed: a file written at the build's start may pass the retention now
            assert got is None


@SETTINGS
@given(
    origin=st.none() | st.tuples(st.sampled_from(IDS), st.integers(T0, T0 + DAY)),
    decided=st.none() | st.tuples(st.sampled_from(IDS), st.integers(T0, T0 + 40 * DAY)),
    wanted=st.none() | st.sampled_from(IDS),
)
def test_the_log_bounds_belong_to_the_table_created_then(
    origin: tuple[str, int] | None, decided: tuple[str, int] | None, wanted: str | None
) -> None:
    with tempfile.TemporaryDirectory() as root:
        table = _target(f"{root}/orders")
        history = HistoryStore(f"{root}/history")
        if origin is not None:
            record_origin(history, table, EmptyOrigin(*origin), invocation_id="b1")
        if decided is not None:  # what a later decision read in the snapshot
            table_id, at = decided
            bounds = LogBounds(table_id, at, at - HOUR, at - 2 * HOUR)
            keep_bounds(history, table, bounds, invocation_id="b2", how="snapshot")
        history = _read_back(history)
        got = recorded_bounds(history, table, table_id=wanted)
        usable = got if got is not None and wanted in (None, got.table_id) else None
        if decided is not None and wanted in (None, decided[0]):
            assert usable == LogBounds(
                decided[0], decided[1], decided[1] - HOUR, decided[1] - 2 * HOUR
            )
        elif origin is not None and wanted in (None, origin[0]):
            assert usable == LogBounds(origin[0], origin[1], origin[1], origin[1])
        else:
            assert usable is None
        assert recorded_bounds(history, _target(f"{root}/other"), table_id=wanted) is None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)


@SETTINGS
@given(
    parameters=st.dictionaries(
        st.sampled_from(["table_id", "empty_at_ms", "other"]), json_values, max_size=3
    )
)
def test_a_record_this_version_cannot_read_gives_nothing(parameters: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as root:
        table = _target(f"{root}/orders")
        history = HistoryStore(f"{root}/history")
        defer_proof(
            history,
            invocation_id="b1",
            model="orders",
            location=table.location,
            op=ORIGIN_OP,
            parameters=parameters,
            at_ms=T0,
            reason="generated",
        )
        history = _read_back(history)
        table_id, empty_at = parameters.get("table_id"), parameters.get("empty_at_ms")
        readable = (
            isinstance(table_id, str)
            and isinstance(empty_at, int)
            and not isinstance(empty_at, bool)
        )
        origin = recorded_origin(history, table)
        assert origin == (EmptyOrigin(table_id, empty_at) if readable else None)  # type: ignore[arg-type]
        bound, _ = trusted_bound(history, table, 168, now_ms=T0, empty_at_ms=None)
        if not readable:
            assert bound is None
            assert recorded_bounds(history, table) is None


def test_a_first_build_keeps_one_row_and_the_next_command_reads_it(tmp_path: Path) -> None:
    table = _target(str(tmp_path / "orders"))
    history = HistoryStore(str(tmp_path / "history"))
    record_origin(history, table, EmptyOrigin("table-a", T0), invocation_id="b1")
    assert history.deferred_count() == 1
    history = _read_back(history)
    (row,) = history.records()
    assert (row.op, row.model, row.table_location, row.status) == (
        ORIGIN_OP,
        "orders",
        table.location,
        "succeeded",
    )
    assert recorded_origin(history, table) == EmptyOrigin("table-a", T0)
