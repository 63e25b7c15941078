"""The statistics op on real Delta tables (delta-rs's and Delta's), through the command line.

Delta's own reads and skipping are in ``test_stats_oracle.py``; here: which files get
statistics, that nothing but the log changes, one commit as Delta's ``COMPUTE STATS``, the
``delta.dataSkippingStatsColumns`` widening, idempotence, dry runs and the refusals.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.config import parse_config
from python_ops.maintenance.rules.due_rules import stats_is_due
from python_ops.maintenance.selection.targets import ModelTarget
from tests.helpers.stats import (
    commit,
    data_files,
    live_adds,
    log_versions,
    parsed,
    partitioned_with_checkpoint,
    run_stats,
    strip_stats,
)


def _rows(location: Path) -> tuple[int, int]:
    from deltalake import DeltaTable

    table = DeltaTable(str(location)).to_pyarrow_table()
    return table.num_rows, sum(table.column("id").to_pylist())


def _write(location: Path, batches: int = 4, **configuration: str) -> None:
    from deltalake import write_deltalake

    for b in range(batches):
        ids = list(range(b * 100, b * 100 + 100))
        write_deltalake(
            str(location),
            pa.table(
                {
                    "id": pa.array(ids, pa.int64()),
                    "name": [f"name-{i:04d}" for i in ids],
                    "amount": pa.array([i * 1.5 for i in ids], pa.float64()),
                    "day": pa.array([i // 10 for i in ids], pa.int32()).cast(pa.date32()),
                }
            ),
            mode="append",
            configuration=configuration or None,
        )


def _unchanged_but_stats(before: dict[str, Any], after: dict[str, Any]) -> None:
    assert set(before) == set(after)
    for path, add in after.items():
        old = before[path]
        for field in ("size", "modificationTime", "partitionValues", "deletionVector", "tags"):
            assert add.get(field) == old.get(field), (path, field)
        assert add["dataChange"] is False


def test_missing_stats_are_filled_in_one_compute_stats_commit(tmp_path: Path) -> None:
    table = tmp_path / "t"
    _write(table)
    rows = _rows(table)
    assert strip_stats(table) == 4
    before, files, versions = live_adds(table), data_files(table), log_versions(table)

    done = run_stats(table, "--json")

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    counts = (result["files_due"], result["files_updated"], result["files_without_stats"])
    assert counts == (4, 4, 4)
    assert result["commit_version"] == versions[-1] + 1
    assert result["files_from_footer"] == 0  # strings and doubles are read from the rows
    assert log_versions(table) == [*versions, versions[-1] + 1]  # one commit
    actions = commit(table, versions[-1] + 1)
    info = actions[0]["commitInfo"]
    assert info["operation"] == "COMPUTE STATS"  # DeltaOperations.ComputeStats
    assert info["operationParameters"] == {"predicate": '["true"]'}
    assert [next(iter(a)) for a in actions[1:]] == ["add"] * 4
    after = live_adds(table)
    _unchanged_but_stats(before, after)
    assert data_files(table) == files  # no data file written, touched or removed
    assert _rows(table) == rows
    for add in after.values():
        stats = parsed(add["stats"])
        assert stats["numRecords"] == 100
        assert set(stats["nullCount"]) == {"id", "name", "amount", "day"}
        low, high = stats["minValues"], stats["maxValues"]
        assert high["id"] - low["id"] == 99
        assert low["name"] == f"name-{low['id']:04d}"
        assert low["day"] < high["day"]

    again = run_stats(table, "--json")  # idempotent: nothing due, no commit
    assert again.returncode == 0, again.stderr
    second = json.loads(again.stdout)
    assert (second["files_due"], second["commit_version"]) == (0, None)
    assert log_versions(table) == [*versions, versions[-1] + 1]


def test_a_watched_column_outside_the_indexed_ones_is_indexed_and_filled(tmp_path: Path) -> None:
    table = tmp_path / "t"
    _write(table, batches=3, **{"delta.dataSkippingNumIndexedCols": "1"})  # stats of id only
    before = live_adds(table)
    assert all(set(json.loads(a["stats"])["minValues"]) == {"id"} for a in before.values())
    plan_before = stats_is_due(_target(table, ["day"]), _snapshot(table), 0)
    assert plan_before[0]
    assert "3 of 3 file(s) lack statistics" in plan_before[1]

    done = run_stats(table, "--columns", "day", "--json")

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["stats_columns_after"] == "id,day"
    assert result["files_updated"] == 3
    assert result["files_from_footer"] == 3  # integers and dates: exact in the footer
    assert result["files_read"] == 0
    last = commit(table, log_versions(table)[-1])
    metadata = next(a["metaData"] for a in last if "metaData" in a)
    assert metadata["configuration"]["delta.dataSkippingStatsColumns"] == "id,day"
    assert metadata["configuration"]["delta.dataSkippingNumIndexedCols"] == "1"
    for add in live_adds(table).values():
        stats = json.loads(add["stats"])
        assert set(stats["minValues"]) == {"id", "day"} == set(stats["nullCount"])
    assert stats_is_due(_target(table, ["day"]), _snapshot(table), 0)[0] is False
    again = run_stats(table, "--columns", "day", "--json")
    assert json.loads(again.stdout)["commit_version"] is None


def _snapshot(table: Path) -> Any:
    from python_ops.delta.state.snapshot import read_snapshot

    return read_snapshot(str(table))


def _target(table: Path, columns: list[str]) -> ModelTarget:
    config = parse_config("m", {"maintenance_stats": "auto", "maintenance_stats_columns": columns})
    return ModelTarget("m", str(table), config)


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    table = tmp_path / "t"
    _write(table, batches=2)
    strip_stats(table)
    versions = log_versions(table)
    done = run_stats(table, "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "2 of 2 file(s) lack statistics" in done.stdout
    assert "dry run: nothing computed or written" in done.stdout
    assert log_versions(table) == versions


def test_deletion_vectors_are_kept_and_bounds_marked_wide(
    fixture_table: Callable[[str], Path],
) -> None:
    table = fixture_table("table-with-dv-small")  # Delta's stats: tightBounds=false, DV of 2 rows
    original = live_adds(table)
    strip_stats(table)
    done = run_stats(table, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["files_with_deletion_vectors"] == 1
    after = live_adds(table)
    _unchanged_but_stats(original, after)
    for path, add in after.items():
        assert add["deletionVector"] == original[path]["deletionVector"]
        # the statistics Delta itself wrote for this file, exactly
        assert json.loads(add["stats"]) == json.loads(original[path]["stats"])


def _protocol_commit(table: Path, features: list[str]) -> None:
    """A new commit whose protocol action lists ``features`` (reader and writer)."""
    version = log_versions(table)[-1] + 1
    protocol = {
        "minReaderVersion": 3,
        "minWriterVersion": 7,
        "readerFeatures": features,
        "writerFeatures": features,
    }
    (table / "_delta_log" / f"{version:020d}.json").write_text(
        json.dumps({"protocol": protocol}) + "\n"
    )


@pytest.mark.parametrize(
    ("features", "words"),
    [
        (["madeUpFeature"], "madeUpFeature"),  # unknown to this project: no op may guess
        (["rowTracking"], "rowTracking"),  # files without row ids must get fresh ones
        (["inCommitTimestamp"], "inCommitTimestamp"),  # every commit must carry one
    ],
)
def test_refused_tables_exit_2_before_writing(
    tmp_path: Path, features: list[str], words: str
) -> None:
    table = tmp_path / "t"
    _write(table, batches=2)
    strip_stats(table)
    _protocol_commit(table, features)
    log = sorted(p.name for p in (table / "_delta_log").iterdir())
    done = run_stats(table)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: ")
    assert words in done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in (table / "_delta_log").iterdir()) == log


@pytest.mark.parametrize(
    ("fixture", "feature"),
    [("table_with_column_mapping", "columnMapping"), ("checkpoint-v2-table", "v2Checkpoint")],
)
def test_column_mapping_and_v2_checkpoint_fixtures_are_filled(
    fixture_table: Callable[[str], Path], fixture: str, feature: str
) -> None:
    """Shared fixtures the op once refused; Delta's own checks are in test_stats_scope.py."""
    table = fixture_table(fixture)
    original = live_adds(table)
    strip_stats(table)  # JSON commits only: a checkpointed file keeps Delta's statistics
    done = run_stats(table, "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["features_ruled"] == [feature]
    added = [a["add"] for a in commit(table, log_versions(table)[-1]) if "add" in a]
    assert len(added) == result["files_updated"] >= 1
    _unchanged_but_stats(
        {a["path"]: original[a["path"]] for a in added}, {a["path"]: a for a in added}
    )
    for add in added:  # ours equal the statistics Delta itself wrote for the file
        assert parsed(add["stats"]) == parsed(original[add["path"]]["stats"]), add["path"]


def test_checkpoints_without_json_stats_are_refused(tmp_path: Path) -> None:
    table = tmp_path / "t"
    _write(table, batches=1, **{"delta.checkpoint.writeStatsAsJson": "false"})
    done = run_stats(table)
    assert done.returncode == 2
    assert "delta.checkpoint.writeStatsAsJson is false" in done.stderr


def test_an_unknown_or_unindexable_column_is_refused(tmp_path: Path) -> None:
    from deltalake import write_deltalake

    table = tmp_path / "t"
    write_deltalake(str(table), pa.table({"id": [1, 2], "flag": [True, False]}))
    versions = log_versions(table)
    unknown = run_stats(table, "--columns", "nope")
    assert unknown.returncode == 2
    assert "no top-level column 'nope'" in unknown.stderr
    boolean = run_stats(table, "--columns", "flag")
    assert boolean.returncode == 2
    assert "Delta keeps no min/max" in boolean.stderr
    assert log_versions(table) == versions


def test_a_concurrent_commit_is_retried_around(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A version taken between planning and committing: the commit lands at the next one."""
    from python_ops.delta.writing.log_commit import write_commit
    from python_ops.ops.stats.run import compute_stats

    table = tmp_path / "t"
    _write(table, batches=2)
    strip_stats(table)
    real = write_commit
    calls: list[int] = []

    def racing(storage: Any, version: int, actions: list[dict[str, Any]]) -> bool:
        if not calls:  # another writer appends first
            _write(table, batches=1)
        calls.append(version)
        return real(storage, version, actions)

    result = compute_stats(str(table), write=racing)  # a real delta-rs append, in the race
    assert calls == [2, 3]
    assert (result.commit_version, result.attempts, result.files_updated) == (3, 2, 2)
    assert _rows(table)[0] == 300
    assert len([a for a in live_adds(table).values() if a.get("stats")]) == 3


def test_the_runner_runs_it_under_maintenance_stats_auto(tmp_path: Path) -> None:
    from python_ops.maintenance.running.runner import Maintainer

    table = tmp_path / "t"
    _write(table, batches=2)
    strip_stats(table)
    outcomes = Maintainer(spark=None, history=None, invocation=Invocation("t")).maintain_model(
        _target(table, []), ops=("stats",)
    )
    assert [(o.op, o.status.value) for o in outcomes] == [("stats", "succeeded")]
    assert all(a.get("stats") for a in live_adds(table).values())
    shutil.rmtree(table)


def test_a_partitioned_table_whose_adds_are_in_a_checkpoint(tmp_path: Path) -> None:
    table = tmp_path / "t"
    partitioned_with_checkpoint(table)
    rows = _rows(table)
    checkpointed = {p: a for p, a in live_adds(table).items()}
    done = run_stats(table, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["files_updated"] == 3
    added = [a["add"] for a in commit(table, log_versions(table)[-1]) if "add" in a]
    by_path = {a["path"]: a for a in added}
    assert set(by_path) == set(checkpointed)
    for path, add in by_path.items():
        old = checkpointed[path]
        assert add["partitionValues"] == old["partitionValues"]  # {"p": null} kept as null
        assert (add["size"], add["modificationTime"]) == (old["size"], old["modificationTime"])
        stats = json.loads(add["stats"])
        assert set(stats["nullCount"]) == {"id"}  # no statistics for a partition column
        assert stats["maxValues"]["id"] - stats["minValues"]["id"] == 9
    assert {json.dumps(a["partitionValues"]) for a in added} == {'{"p": null}', '{"p": "x"}'}
    assert _rows(table) == rows


def test_metadata_copied_from_a_checkpoint_keeps_lists_and_maps(tmp_path: Path) -> None:
    """Widening the statistics columns copies the ``metaData`` action; from a checkpoint's row,
    an empty ``partitionColumns`` list stays a list and empty maps stay objects."""
    from deltalake import DeltaTable

    table = tmp_path / "t"
    _write(table, batches=2, **{"delta.dataSkippingNumIndexedCols": "1"})
    strip_stats(table)
    DeltaTable(str(table)).create_checkpoint()
    before = next(a["metaData"] for a in commit(table, 0) if "metaData" in a)

    done = run_stats(table, "--columns", "amount", "--json")

    assert done.returncode == 0, done.stderr
    (metadata,) = [a["metaData"] for a in commit(table, log_versions(table)[-1]) if "metaData" in a]
    assert metadata["partitionColumns"] == before["partitionColumns"] == []
    assert metadata["format"] == before["format"]
    assert metadata["schemaString"] == before["schemaString"]
    assert metadata["configuration"] == {
        **before["configuration"],
        "delta.dataSkippingStatsColumns": "id,amount",
    }
    assert _rows(table) == (200, sum(range(200)))
    assert DeltaTable(str(table)).metadata().partition_columns == []
