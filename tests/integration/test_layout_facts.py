"""``facts.layout`` on real Delta logs: which write replaced a table, and whether a Z-order holds.

Tables written by delta-rs (appends, an overwrite, a property change) and Z-ordered by the
package's own OPTIMIZE: ``last_replacement`` finds the overwrite through the commits that write
no data and never an append or a rewrite; ``layout_replaced`` says a Z-order's files are gone
only once the commit that removed the last of them is in the log; ``clustering_columns`` reads
the newest ``delta.clustering`` domain.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake

from python_ops.delta.state.snapshot import read_snapshot
from python_ops.maintenance.facts.layout import (
    clustering_columns,
    last_replacement,
    layout_replaced,
)
from python_ops.ops.optimize.execute import optimize
from python_ops.storage import open_storage


def _rows(start: int) -> pa.Table:
    ids = list(range(start, start + 100))
    return pa.table({"id": ids, "user_id": [i * 7 % 13 for i in ids]})


def _live(location: str) -> tuple[int, list[str]]:
    snapshot = read_snapshot(location)
    return snapshot.version, [f.path for f in snapshot.files]


def _live_at(location: str, version: int) -> list[str]:
    return [f.path for f in read_snapshot(location, version=version).files]


def test_an_overwrite_replaces_the_table_and_an_append_or_a_rewrite_does_not(
    tmp_path: Path,
) -> None:
    location = str(tmp_path / "t")
    storage = open_storage(location)
    write_deltalake(location, _rows(0))
    write_deltalake(location, _rows(100), mode="append")
    head, live = _live(location)
    assert last_replacement(storage, head, live) is None  # the append left v0's file live
    write_deltalake(location, _rows(0), mode="overwrite")
    DeltaTable(location).alter.set_table_properties({"delta.appendOnly": "false"})
    head, live = _live(location)
    found = last_replacement(storage, head, live)  # seen through SET TBLPROPERTIES
    assert found is not None
    assert found.version == head - 1
    assert found.timestamp_ms is not None
    write_deltalake(location, _rows(100), mode="append")
    optimize(location, zorder_by=["user_id"])
    head, live = _live(location)
    assert last_replacement(storage, head, live) is None  # Z-ordered since: no rebuild
    # a MERGE that rewrote every file is an incremental build: the interval holds
    table = DeltaTable(location)
    table.merge(
        _rows(0), "s.id = t.id", source_alias="s", target_alias="t"
    ).when_matched_update_all().when_not_matched_insert_all().execute()
    head, live = _live(location)
    assert all(p not in live for p in _live_at(location, head - 1))
    assert last_replacement(storage, head, live) is None


def test_a_zorders_files_are_replaced_only_by_the_write_that_removes_them(
    tmp_path: Path,
) -> None:
    location = str(tmp_path / "t")
    storage = open_storage(location)
    write_deltalake(location, _rows(0))
    write_deltalake(location, _rows(100), mode="append")
    result = optimize(location, zorder_by=["user_id"])
    written = (result.version_before, max(result.commits))
    write_deltalake(location, _rows(200), mode="append")
    head, live = _live(location)
    assert layout_replaced(storage, written, head, live) is None  # appended to: still there
    write_deltalake(location, _rows(0), mode="overwrite")
    head, live = _live(location)
    gone = layout_replaced(storage, written, head, live)
    assert gone is not None
    assert gone.version == head
    assert gone.operation  # delta-rs names its commit


def _commit(log: Path, version: int, *actions: dict[str, object]) -> None:
    lines = [json.dumps(a) for a in ({"commitInfo": {"operation": "WRITE"}}, *actions)]
    (log / f"{version:020d}.json").write_text("\n".join(lines) + "\n")


def test_the_clustering_columns_are_the_newest_delta_clustering_domains(tmp_path: Path) -> None:
    log = tmp_path / "t" / "_delta_log"
    log.mkdir(parents=True)

    def domain(columns: list[list[str]]) -> dict[str, object]:
        config = {"clusteringColumns": columns, "domainName": "delta.clustering"}
        body = {"domain": "delta.clustering", "configuration": json.dumps(config)}
        return {"domainMetadata": {**body, "removed": False}}

    _commit(log, 0, domain([["u"], ["a", "b"]]))
    _commit(log, 1)  # a commit without the domain: the one before still holds
    _commit(log, 2, domain([]))  # CREATE OR REPLACE without CLUSTER BY: emptied
    storage = open_storage(str(tmp_path / "t"))
    assert clustering_columns(storage, 1) == ("u", "a.b")
    assert clustering_columns(storage, 2) == ()
    other = tmp_path / "o" / "_delta_log"
    other.mkdir(parents=True)
    _commit(other, 0)
    assert clustering_columns(open_storage(str(tmp_path / "o")), 0) is None  # not known
