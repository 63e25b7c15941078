"""Rewrites of a table with identity columns and v2 checkpoints here, no JVM (issue 64 item 2).

The fixture ``checkpoint-v2-table`` (Delta-written: ``identityColumns``, ``v2Checkpoint`` with
``delta.checkpointPolicy = v2`` and a checkpoint every 2 commits, eight small files). A
compaction writes no identity value and no checkpoint: one JSON commit. Delta 4.4 reads the
same rows, its next insert continues the identity sequence past the high-water mark with no
duplicate, and its own next checkpoints are still v2.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from python_ops.delta.state.snapshot import read_snapshot
from python_ops.ops.optimize.execute import WRITER_COMPACT, optimize
from tests.helpers.delta_reads import oracle, table_sql
from tests.helpers.paths import DELTA_TABLES, require_shared

pytestmark = [pytest.mark.classic_spark, pytest.mark.delta_jars]


def test_a_v2_checkpoint_identity_table_is_compacted_here(tmp_path: Path, delta_spark: Any) -> None:
    require_shared()
    table = tmp_path / "v2"
    shutil.copytree(DELTA_TABLES / "checkpoint-v2-table", table)
    before = oracle(delta_spark, table)
    snapshot = read_snapshot(str(table))
    ids = [r["id"] for r in delta_spark.sql(f"SELECT id FROM {table_sql(table)}").collect()]
    checkpoints = {p.name for p in (table / "_delta_log").iterdir() if "checkpoint" in p.name}

    result = optimize(str(table), min_small_files=2, audit=False)

    assert result.writer == WRITER_COMPACT  # here, no JVM
    assert result.files_removed == len(snapshot.files)
    after = {p.name for p in (table / "_delta_log").iterdir() if "checkpoint" in p.name}
    assert after == checkpoints  # no checkpoint of ours (v2 stays Delta's)
    assert oracle(delta_spark, table) == before
    name = table_sql(table)
    for _ in range(2):  # Delta checkpoints every 2 commits: its next checkpoint is v2
        delta_spark.sql(f"INSERT INTO {name} (name, created_at) VALUES ('x', now())").collect()
    new_ids = [r["id"] for r in delta_spark.sql(f"SELECT id FROM {name}").collect()]
    assert len(new_ids) == len(set(new_ids)) == len(ids) + 2  # no identity value reused
    assert min(set(new_ids) - set(ids)) > max(ids)
    newest = {p.name for p in (table / "_delta_log").iterdir() if "checkpoint" in p.name}
    assert any(".checkpoint." in n and n.count(".") >= 3 for n in newest - after)  # v2 (uuid)
