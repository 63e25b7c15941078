"""A small checkpoint decoded in one read yields what the column-at-a-time reader yields.

``read_parquet_actions`` reads a checkpoint of at most ``_SMALL_CHECKPOINT_ROWS`` rows with one
read of every action's leaves, its rows converted at once (a post-hook reads a table's first
checkpoints after every build). The rows, their order, their row numbers and what the replay
parses from them must be those of the reader big checkpoints take: checked on every Parquet
checkpoint and sidecar of the shared fixtures (Spark- and delta-rs-written) and on generated
files whose actions are interleaved, null-padded and partly malformed.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from python_ops.delta.log.actions import AddFile
from python_ops.delta.state import checkpoint_reader
from python_ops.delta.state.checkpoint_reader import read_parquet_actions
from python_ops.errors import DeltaLogError
from tests.helpers.paths import FIXTURES_ROOT, NEEDS_SHARED

FILES = sorted(FIXTURES_ROOT.rglob("*.parquet"))
CHECKPOINTS = [p for p in FILES if ".checkpoint." in p.name and "_delta_log" in p.parts]


def _parsed(action: dict[str, Any], root: str | None) -> Any:
    """An action as the snapshot's replay takes it: an ``add`` row parsed (or its refusal)."""
    ((kind, value),) = action.items()
    if kind != "add" or root is None or isinstance(value, AddFile):
        return action
    try:
        return {kind: AddFile.parse(value, root)}
    except DeltaLogError as err:
        return f"refused: {err}"


def _both(data: bytes, **kwargs: Any) -> tuple[list[Any], list[Any]]:
    """(the one-read path's actions, the column-at-a-time path's), or their errors.

    Each ``add`` as the replay parses it: the small path hands every row over as a dict, the
    big one parses well-formed rows column-wise and hands the rest over.
    """

    def run() -> list[Any] | str:
        try:
            rows = read_parquet_actions(data, "f", **kwargs)
            return [(at, _parsed(action, kwargs.get("root"))) for at, action in rows]
        except DeltaLogError as err:
            return f"refused: {err}"

    small = run()
    saved = checkpoint_reader._SMALL_CHECKPOINT_ROWS
    checkpoint_reader._SMALL_CHECKPOINT_ROWS = -1  # every file takes the big files' path
    try:
        big = run()
    finally:
        checkpoint_reader._SMALL_CHECKPOINT_ROWS = saved
    return small, big  # type: ignore[return-value]


@pytest.mark.skipif(not CHECKPOINTS, reason=NEEDS_SHARED)
@pytest.mark.parametrize("path", CHECKPOINTS, ids=lambda p: f"{p.parents[1].name}/{p.name[:30]}")
@pytest.mark.parametrize("with_stats", [False, True])
@pytest.mark.parametrize("root", [None, "file:///tables/t"])
def test_fixture_checkpoints_read_alike(path: Path, with_stats: bool, root: str | None) -> None:
    small, big = _both(path.read_bytes(), with_stats=with_stats, root=root)
    assert small == big
    assert small, "every fixture checkpoint holds actions"


_ADD = pa.struct(
    [
        ("path", pa.string()),
        ("partitionValues", pa.map_(pa.string(), pa.string())),
        ("size", pa.int64()),
        ("modificationTime", pa.int64()),
        ("dataChange", pa.bool_()),
        ("stats", pa.string()),
    ]
)
_REMOVE = pa.struct(
    [("path", pa.string()), ("deletionTimestamp", pa.int64()), ("size", pa.int64())]
)
_PROTOCOL = pa.struct([("minReaderVersion", pa.int32()), ("minWriterVersion", pa.int32())])
_TXN = pa.struct([("appId", pa.string()), ("version", pa.int64())])

row = st.one_of(
    st.tuples(
        st.just("add"),
        st.sampled_from(["a.parquet", "p=1/b.parquet", "c%20d.parquet", "", None]),
        st.one_of(st.none(), st.integers(-1, 10**9)),
        st.one_of(st.none(), st.just('{"numRecords":3}')),
    ),
    st.tuples(
        st.just("remove"),
        st.sampled_from(["a.parquet", "x/y.parquet", None]),
        st.one_of(st.none(), st.integers(0, 10**12)),
        st.none(),
    ),
    st.tuples(st.just("protocol"), st.none(), st.integers(1, 3), st.none()),
    st.tuples(st.just("txn"), st.none(), st.integers(0, 9), st.none()),
    st.tuples(st.just("nothing"), st.none(), st.none(), st.none()),
)


def _checkpoint(rows: list[tuple[str, Any, Any, Any]]) -> bytes:
    """A Parquet file with one action (or none) per row, as Delta lays checkpoints out."""
    columns: dict[str, list[Any]] = {"add": [], "remove": [], "protocol": [], "txn": []}
    for kind, path, number, stats in rows:
        for name in columns:
            columns[name].append(None)
        if kind == "add":
            columns["add"][-1] = {
                "path": path,
                "partitionValues": [("p", "1")] if path and path.startswith("p=") else [],
                "size": number,
                "modificationTime": 1,
                "dataChange": False,
                "stats": stats,
            }
        elif kind == "remove":
            columns["remove"][-1] = {"path": path, "deletionTimestamp": number, "size": 5}
        elif kind == "protocol":
            columns["protocol"][-1] = {"minReaderVersion": number, "minWriterVersion": 7}
        elif kind == "txn":
            columns["txn"][-1] = {"appId": "app", "version": number}
    types = {"add": _ADD, "remove": _REMOVE, "protocol": _PROTOCOL, "txn": _TXN}
    table = pa.table({k: pa.array(v, type=types[k]) for k, v in columns.items()})
    out = io.BytesIO()
    pq.write_table(table, out, row_group_size=7)  # several row groups: chunked columns
    return out.getvalue()


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(row, min_size=1, max_size=40),
    with_stats=st.booleans(),
    root=st.sampled_from([None, "file:///tables/t"]),
)
def test_generated_checkpoints_read_alike(
    rows: list[tuple[str, Any, Any, Any]], with_stats: bool, root: str | None
) -> None:
    small, big = _both(_checkpoint(rows), with_stats=with_stats, root=root)
    assert small == big
