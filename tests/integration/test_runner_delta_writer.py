"""The runner on a deletion-vector table with no engine of its own: OPTIMIZE and the purge
run on the local Delta writer, the outcomes and the history say so, Delta reads the same rows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from python_ops.delta.snapshot import read_snapshot
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.records.history import HistoryStore
from python_ops.maintenance.records.outcomes import Reason, Status
from python_ops.maintenance.running.runner import Maintainer
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.ops.optimize.execute import WRITER_COMPACT
from tests.helpers.delta_reads import oracle, table_sql

pytestmark = [pytest.mark.classic_spark, pytest.mark.delta_jars]


def test_maintain_a_deletion_vector_table_here_without_a_jvm(
    tmp_path: Path, delta_spark: Any
) -> None:
    table = tmp_path / "dv"
    name = table_sql(table)
    delta_spark.sql(
        f"CREATE TABLE {name} (id BIGINT, v STRING) USING delta "
        "TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')"
    ).collect()
    for i in range(3):
        delta_spark.sql(
            f"INSERT INTO {name} SELECT id, 'x' FROM range({i * 100}, {i * 100 + 100}, 1, 1)"
        ).collect()
    delta_spark.sql(f"DELETE FROM {name} WHERE id % 4 = 0").collect()  # 25 % deleted
    before = oracle(delta_spark, table)
    history = HistoryStore(str(tmp_path / "history"))
    target = ModelTarget("dv", str(table), parse_config("dv", {"maintenance_min_small_files": 2}))
    maintainer = Maintainer(spark=None, history=history, invocation=Invocation("t"))
    decided = {o.op: o for o in maintainer.maintain_model(target, dry_run=True)}
    assert decided["purge"].reason is Reason.DUE
    assert "more than 0.05 of their rows deleted (up to 25.0%)" in decided["purge"].detail
    outcomes = {o.op: o for o in maintainer.maintain_model(target, only_due=True)}
    optimize = outcomes["optimize"]
    assert (optimize.status, optimize.reason) == (Status.SUCCEEDED, Reason.DUE)
    # rewritten here (embedded means embedded): no local Delta writer, no JVM
    assert "Delta OPTIMIZE (SQL)" not in (optimize.note or "") + optimize.summary
    # every file rewritten without its deleted rows: nothing left to purge
    assert not any(f.deletion_vector for f in read_snapshot(str(table)).files)
    # the purge was due before OPTIMIZE; what is due next is decided on the log after
    # OPTIMIZE's commit: no deletion vector is left, so no purge runs (no second commit)
    purge = outcomes["purge"]
    assert (purge.status, purge.reason) == (Status.NOT_DUE, Reason.NOT_DUE)
    assert purge.detail == "no deletion vectors"
    real = [r for r in history.records() if not r.dry_run and r.op == "optimize"]
    assert json.loads(real[-1].parameters)["writer"] == WRITER_COMPACT
    assert oracle(delta_spark, table) == before
