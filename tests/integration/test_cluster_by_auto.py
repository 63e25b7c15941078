"""``maintenance_cluster_by: auto`` on a table Delta 4.4 clusters (the ``delta_spark`` server).

The advisor reads a manifest whose reader filters the table on ``b`` (the table is clustered by
``a``): the runner alters the table with Delta's own ``ALTER TABLE ... CLUSTER BY (b)``, Delta's
clustering OPTIMIZE re-clusters it in full once, Delta reads the same rows, the history records
the choice, and a second run with the same choice does not re-cluster.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from python_ops.delta.log.commits import commit_actions
from python_ops.delta.state.snapshot import read_snapshot
from python_ops.delta_sql import session_sql
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.records.history import HistoryStore
from python_ops.maintenance.records.outcomes import Status
from python_ops.maintenance.running.runner import Maintainer
from python_ops.maintenance.runs.auto_columns import ProjectAdvice
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.storage import open_storage
from tests.helpers.delta_reads import oracle
from tests.integration.test_clustering import clustered_table

pytestmark = [pytest.mark.classic_spark, pytest.mark.delta_jars]

CONFIG = {
    "materialized": "table",
    "maintenance_cluster_by": "auto",
    "maintenance_min_small_files": 2,
    # files of 2 KB: the advisor scores layouts by the files its readers skip, and a table of
    # one file skips none under any layout
    "maintenance_target_file_size": "2KB",
}


def _manifest() -> dict[str, Any]:
    events = {
        "unique_id": "model.p.events",
        "resource_type": "model",
        "name": "events",
        "schema": "shop",
        "alias": "events",
        "config": CONFIG,
        "depends_on": {"nodes": []},
    }
    reader = {
        "unique_id": "model.p.by_b",
        "resource_type": "model",
        "name": "by_b",
        "schema": "shop",
        "alias": "by_b",
        "config": {"materialized": "view"},
        "depends_on": {"nodes": ["model.p.events"]},
        "compiled": True,
        "compiled_code": "select a, c from shop.events where b = 3",
    }
    return {"nodes": {n["unique_id"]: n for n in (events, reader)}, "sources": {}}


def _operations(table: Path) -> list[str]:
    storage = open_storage(str(table))
    out = []
    for version in range(read_snapshot(str(table)).version + 1):
        info = next(a["commitInfo"] for a in commit_actions(storage, version) if "commitInfo" in a)
        params = info.get("operationParameters") or {}
        full = params.get("isFull") in (True, "true")
        out.append(f"{info['operation']}{' FULL' if full else ''}")
    return out


def test_cluster_by_auto_alters_and_reclusters_once(tmp_path: Path, delta_spark: Any) -> None:
    table = tmp_path / "events"
    clustered_table(delta_spark, table)
    before = oracle(delta_spark, table)
    target = ModelTarget(
        "events", str(table), parse_config("events", CONFIG), unique_id="model.p.events"
    )
    history = HistoryStore(str(tmp_path / "history"))
    maintainer = Maintainer(
        spark=delta_spark,
        history=history,
        invocation=Invocation("t"),
        sql=session_sql(delta_spark),
        advice_for=ProjectAdvice(_manifest(), str(tmp_path), lambda node: str(table)),
    )
    (outcome,) = maintainer.maintain_model(target, ops=("optimize",))
    assert outcome.status is Status.SUCCEEDED, outcome.detail
    assert "auto: the advisor chose b" in outcome.detail
    operations = _operations(table)
    assert operations[-2:] == ["CLUSTER BY", "OPTIMIZE FULL"], operations
    assert oracle(delta_spark, table) == before
    (record,) = [r for r in history.records() if r.op == "optimize"]
    assert record.clustering_columns == "b"
    assert json.loads(record.clustering_evidence or "{}") == {"b": ["model.p.by_b (equality)"]}
    version = read_snapshot(str(table)).version
    (again,) = maintainer.maintain_model(target, ops=("optimize",))
    assert again.status is Status.NOT_DUE, again.detail
    assert read_snapshot(str(table)).version == version
