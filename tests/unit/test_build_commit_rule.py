"""``build_commit`` in one pass: the same commit as the rule written as separate passes.

The rule (a commit is a build's write unless maintenance made it; files from the metrics, else
the new ``add`` actions; rows from the metrics, else every new file's statistics; the partitions
its changed files touched) is kept below as it read before the post-hook needed it in one pass,
and the two agree over generated commits of every action kind, metric spelling and shape.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from python_ops.delta.log.commits import commit_info
from python_ops.maintenance.facts.build_writes import (
    FILE_METRICS,
    MAINTENANCE_OPERATIONS,
    ROW_METRICS,
    RUN_MARKER,
    BuildCommit,
    _metric,
    _records,
    build_commit,
)


def _reference(version: int, actions: list[dict[str, Any]]) -> BuildCommit | None:
    raw_info: dict[str, Any] = next((a["commitInfo"] for a in actions if "commitInfo" in a), {})
    info = commit_info(version, actions, 0)
    operation = info.operation or ""
    if operation in MAINTENANCE_OPERATIONS or RUN_MARKER in raw_info:
        return None
    adds = [a["add"] for a in actions if isinstance(a.get("add"), dict)]
    changed = [a for a in adds if a.get("dataChange") is not False]
    if adds and not changed:
        return None
    removed = {a["remove"].get("path") for a in actions if isinstance(a.get("remove"), dict)}
    new_files = [a for a in changed if a.get("path") not in removed]
    metric = _metric(info.operation_metrics, FILE_METRICS)
    files, files_metric = metric if metric is not None else (len(new_files), "")
    rows_metric = _metric(info.operation_metrics, ROW_METRICS)
    if rows_metric is not None:
        rows: int | None = rows_metric[0]
    else:
        counted = [_records(a) for a in new_files]
        rows = None if any(r is None for r in counted) else sum(r for r in counted if r)
    partitions = {
        tuple(sorted((str(k), v) for k, v in (a.get("partitionValues") or {}).items()))
        for a in changed
    }
    added = {a.get("path") for a in new_files}
    return BuildCommit(version=version, operation=operation, files_written=files,
                       files_metric=files_metric, rows_written=rows, files_added=len(added),
                       partitions=tuple(sorted(partitions, key=str)))  # fmt: skip


PATHS = st.sampled_from(["a.parquet", "b.parquet", "d=1/c.parquet", None])
METRIC_VALUES = st.one_of(
    st.integers(-1, 5), st.integers(0, 5).map(str), st.booleans(), st.just("x"), st.none()
)
METRICS = st.dictionaries(
    st.sampled_from([*FILE_METRICS, *ROW_METRICS, "executionTimeMs"]), METRIC_VALUES, max_size=4
)
INFO = st.fixed_dictionaries(
    {},
    optional={
        "operation": st.sampled_from(["WRITE", "MERGE", "OPTIMIZE", "VACUUM END", "DELETE"]),
        "operationMetrics": METRICS,
        "timestamp": st.integers(0, 10**13),
        RUN_MARKER: st.just("run-1"),
    },
)
STATS = st.one_of(
    st.none(),
    st.integers(0, 9).map(lambda n: json.dumps({"numRecords": n})),
    st.just('{"numRecords": true}'),
    st.just("not json"),
)
ADD = st.fixed_dictionaries(
    {"path": PATHS},
    optional={
        "dataChange": st.sampled_from([True, False, None]),
        "partitionValues": st.one_of(
            st.none(), st.dictionaries(st.sampled_from(["d", "e"]), st.sampled_from(["1", None]))
        ),
        "stats": STATS,
    },
)
ACTIONS = st.lists(
    st.one_of(
        INFO.map(lambda v: {"commitInfo": v}),
        ADD.map(lambda v: {"add": v}),
        st.fixed_dictionaries({"path": PATHS}).map(lambda v: {"remove": v}),
        st.just({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}),
        st.just({"add": "not an object"}),
    ),
    max_size=8,
)


@settings(max_examples=500, deadline=None)
@given(version=st.integers(0, 50), actions=ACTIONS)
def test_one_pass_is_the_rule(version: int, actions: list[dict[str, Any]]) -> None:
    assert build_commit(version, actions) == _reference(version, actions)


@given(
    st.one_of(
        st.lists(st.lists(st.text(max_size=3), min_size=2, max_size=2)), st.integers(), st.text()
    ),
    st.integers(0, 4),
)
def test_metrics_that_are_not_an_object_count_the_files(metrics: Any, files: int) -> None:
    adds = [
        {"add": {"path": f"p{i}", "partitionValues": {}, "size": 1, "dataChange": True}}
        for i in range(files)
    ]
    info = {"commitInfo": {"operation": "WRITE", "operationMetrics": metrics}}
    commit = build_commit(3, [info, *adds])
    assert commit is not None
    assert (commit.files_written, commit.files_metric) == (files, "")
