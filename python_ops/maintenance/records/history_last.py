"""The newest successful real run of each (model, op), read from the history's columns.

Deciding what is due reads, per model, the last run of each op and the proofs the history
keeps (``log_bounds``, ``vacuum_check``): the newest row of each (model, op) whose status is
``succeeded`` and which was not a dry run. The history holds a row per op run and per proof,
so it grows with the estate and with time; a post-hook reads it once per dbt process.

It is read by columns, not by rows: the columns deciding uses, the row of each (model, op) found
in one pass over plain lists, and a small record made for that row alone. A row per run as a
``HistoryRecord`` (25 fields, a ``datetime`` each) cost 16 us; at 1,000 models (2,010 rows)
the first post-hook of a build paid 30 ms for it before any decision.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, NamedTuple

from python_ops.maintenance.records.outcomes import Status

# what deciding reads of a run (and what picks the run)
LAST_RUN_COLUMNS = (
    "model",
    "op",
    "table_location",
    "parameters",
    "status",
    "dry_run",
    "started_at",
    "clustering_columns",
)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MICROSECOND = dt.timedelta(microseconds=1)
_SUCCEEDED = str(Status.SUCCEEDED)


class LastRun(NamedTuple):
    """An op's newest successful real run on a model, as deciding reads it.

    A named tuple: a history's first read makes one per (model, op), thousands at once.

    Attributes:
        model: The model.
        op: The op (or the proof's kind).
        table_location: The table it ran on.
        parameters: Its parameters as JSON ('' when the row has none).
        started_at_us: When it started, in microseconds since the epoch (UTC).
        clustering_columns: OPTIMIZE with ``auto`` clustering: the advisor's columns.
    """

    model: str
    op: str
    table_location: str
    parameters: str
    started_at_us: int
    clustering_columns: str | None = None

    @property
    def started_at(self) -> dt.datetime:
        """When it started (UTC)."""
        return _EPOCH + self.started_at_us * _MICROSECOND

    @property
    def started_s(self) -> float:
        """When it started, in seconds since the epoch."""
        return self.started_at_us / 1_000_000


def microseconds(at: dt.datetime) -> int:
    """A time as microseconds since the epoch (a naive time is UTC, as the history stores it)."""
    if at.tzinfo is None:
        at = at.replace(tzinfo=dt.UTC)
    return (at - _EPOCH) // _MICROSECOND


def counts(status: str | None, dry_run: bool | None) -> bool:
    """Whether a run can be the last success: it succeeded and was not a dry run."""
    return status == _SUCCEEDED and not dry_run


def last_runs(table: Any) -> dict[tuple[str, str], LastRun]:
    """The newest counted run of each (model, op) in a history table (an Arrow table).

    Newest by ``started_at``; of runs that started in the same microsecond, the greatest by
    ``tie_key`` (not the later row: the rows' order is the files' order in a snapshot, which a
    checkpoint may change, so the same rows give the same answer however they were written or
    read). A row without a start time is never the newest.

    Args:
        table: The history's rows, with at least ``LAST_RUN_COLUMNS`` (``started_at`` a
            timestamp in microseconds).
    """
    import pyarrow as pa

    column = {name: table[name].to_pylist() for name in ("model", "op", "status", "dry_run")}
    starts = pa.chunked_array(
        [chunk.view(pa.int64()) for chunk in table["started_at"].chunks], pa.int64()
    ).to_pylist()
    locations, parameters, clustering = (
        table[name].to_pylist() for name in ("table_location", "parameters", "clustering_columns")
    )
    newest: dict[tuple[str, str], tuple[int, int]] = {}
    for row, (model, op, status, dry_run, at) in enumerate(
        zip(*column.values(), starts, strict=True)
    ):
        if at is None or not counts(status, dry_run):
            continue
        found = newest.get((model, op))
        if found is None or found[0] < at:
            newest[(model, op)] = (at, row)
        elif found[0] == at:
            kept = found[1]
            if tie_key(locations[row], parameters[row], clustering[row]) > tie_key(
                locations[kept], parameters[kept], clustering[kept]
            ):
                newest[(model, op)] = (at, row)
    return {
        (model, op): LastRun(
            model, op, locations[row] or "", parameters[row] or "", at, clustering[row]
        )
        for (model, op), (at, row) in newest.items()
    }


def tie_key(
    location: str | None, parameters: str | None, clustering: str | None
) -> tuple[str, str, bool, str]:
    """What orders two runs of one (model, op) that started in the same microsecond."""
    return (location or "", parameters or "", clustering is not None, clustering or "")


def newer(run: LastRun, than: LastRun) -> bool:
    """Whether ``run`` is the last of the two, as ``last_runs`` picks (same model and op)."""
    if run.started_at_us != than.started_at_us:
        return run.started_at_us > than.started_at_us
    return tie_key(run.table_location, run.parameters, run.clustering_columns) > tie_key(
        than.table_location, than.parameters, than.clustering_columns
    )
