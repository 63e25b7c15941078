"""The last success of each (model, op), read by columns, is the newest counted row.

Over generated histories (several commits; runs that succeeded, failed or were skipped, dry
or real; start times that tie), ``HistoryStore.last_success`` answers what the rows say: the
newest row of the (model, op) that succeeded and was not a dry run, the later one of a tie.
The reference is the rule over every row as a ``HistoryRecord`` (``records``), through this
package's reader and through delta-rs (a partitioned table), and for a store that appended the
runs itself after reading.
"""

from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path

import pyarrow as pa
from deltalake import write_deltalake
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from python_ops.maintenance.records.history import HistoryRecord, HistoryStore
from python_ops.maintenance.records.history_last import LastRun, microseconds, tie_key
from python_ops.maintenance.records.history_read import arrow_schema

MODELS, OPS = ("m0", "m1", "m2"), ("vacuum", "optimize", "log_bounds")
START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)

records = st.builds(
    lambda i, model, op, status, dry, hour, params, clustering: HistoryRecord(
        invocation_id=f"inv-{i}",
        model=model,
        table_location=f"/t/{model}/{i % 2}",
        op=op,
        parameters=params,
        dry_run=dry,
        status=status,
        error=None,
        started_at=START + dt.timedelta(hours=hour),
        duration_s=0.5,
        clustering_columns=clustering,
    ),
    st.integers(0, 9),
    st.sampled_from(MODELS),
    st.sampled_from(OPS),
    st.sampled_from(("succeeded", "failed", "skipped")),
    st.booleans(),
    st.integers(0, 4),
    st.sampled_from(("{}", '{"removed_since_ms": 1}', "not json")),
    st.sampled_from((None, "", "a,b")),
)
histories = st.lists(st.lists(records, max_size=6), min_size=1, max_size=4)


def expected(rows: list[HistoryRecord]) -> dict[tuple[str, str], LastRun]:
    """The rule over whole records: oldest first; of one start, the greatest ``tie_key``."""
    last: dict[tuple[str, str], LastRun] = {}
    order = sorted(
        rows,
        key=lambda r: (r.started_at, tie_key(r.table_location, r.parameters, r.clustering_columns)),
    )
    for r in order:
        if r.status == "succeeded" and not r.dry_run:
            at = microseconds(r.started_at)
            last[(r.model, r.op)] = LastRun(
                r.model, r.op, r.table_location, r.parameters, at, r.clustering_columns
            )
    return last


def answers(store: HistoryStore) -> dict[tuple[str, str], LastRun]:
    found = {(m, o): store.last_success(m, o) for m in MODELS for o in OPS}
    return {key: run for key, run in found.items() if run is not None}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches=histories)
def test_the_last_success_is_the_newest_counted_row(batches: list[list[HistoryRecord]]) -> None:
    with tempfile.TemporaryDirectory() as top:
        location = str(Path(top) / "history")
        writer = HistoryStore(location)
        assert writer.last_success("m0", "vacuum") is None  # read (nothing yet), then kept
        for batch in batches:
            writer.append(batch)
        rows = HistoryStore(location).records()
        assert len(rows) == sum(len(b) for b in batches)
        want = expected(rows)

        assert answers(HistoryStore(location)) == want  # this package's reader
        assert answers(writer) == want  # remembered as appended
        for (model, op), run in want.items():  # the time as the row has it
            assert run.started_at in {r.started_at for r in rows if (r.model, r.op) == (model, op)}
            assert run.started_s == run.started_at.timestamp()

        partitioned = str(Path(top) / "partitioned")  # not plain: read through delta-rs
        table = pa.Table.from_pylist([dict(r.__dict__) for r in rows], schema=arrow_schema())
        if rows:
            write_deltalake(partitioned, table, partition_by=["op"])
            assert answers(HistoryStore(partitioned)) == want


def test_a_missing_history_has_no_last_success(tmp_path: Path) -> None:
    assert HistoryStore(str(tmp_path / "none")).last_success("m0", "vacuum") is None
