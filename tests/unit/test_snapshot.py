"""The Delta log reader (no engine) against real tables written by Spark, Databricks, delta-rs.

Each test reads a copy of a shared fixture table and compares with delta-rs where it can; strict
reading (a gap in the versions, a checkpoint ``_last_checkpoint`` names but that is missing) is
refused with a named error.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from deltalake import DeltaTable

from python_ops.delta.log.actions import z85_decode
from python_ops.delta.log.commits import read_history
from python_ops.delta.state.snapshot import read_snapshot
from python_ops.errors import DeltaLogError, TableNotFoundError
from tests.helpers.paths import delta_table_names
from tests.helpers.trust import append_commit


@pytest.mark.parametrize("name", delta_table_names())
def test_snapshot_matches_delta_rs(fixture_table, name: str) -> None:
    table = fixture_table(name)
    snap = read_snapshot(str(table))
    reference = DeltaTable(str(table))
    assert snap.version == reference.version()
    ours = sorted(f"{snap.location}/{f.relative_path}" for f in snap.files)
    assert ours == sorted(reference.file_uris())
    assert list(snap.metadata.partition_columns) == reference.metadata().partition_columns
    assert snap.metadata.configuration == reference.metadata().configuration


def test_v2_checkpoint_with_sidecars_is_used(fixture_table) -> None:
    table = fixture_table("checkpoint-v2-table")
    snap = read_snapshot(str(table))
    assert snap.checkpoint_version == 8
    # Without the sidecar the checkpoint has no add actions: 7 of the live files come from it.
    sidecars = list((table / "_delta_log" / "_sidecars").iterdir())
    for sidecar in sidecars:
        sidecar.unlink()
    with pytest.raises(FileNotFoundError):
        read_snapshot(str(table))


def test_checkpoint_found_without_last_checkpoint(fixture_table) -> None:
    table = fixture_table("with_checkpoint_no_last_checkpoint")
    assert not (table / "_delta_log" / "_last_checkpoint").exists()
    snap = read_snapshot(str(table))
    assert snap.checkpoint_version == 2
    assert snap.version == 3


def test_time_travel_to_older_version(fixture_table) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    for version in (0, 5, 9, 10):
        snap = read_snapshot(str(table), version=version)
        reference = DeltaTable(str(table), version=version)
        assert snap.version == version
        assert sorted(f.relative_path for f in snap.files) == sorted(
            os.path.relpath(uri, str(table)) for uri in reference.file_uris()
        )


def test_live_deletion_vector_file_is_resolved(fixture_table) -> None:
    table = fixture_table("table-with-dv-small")
    snap = read_snapshot(str(table))
    (live,) = snap.files
    assert live.deletion_vector is not None
    dv_path = live.deletion_vector.file_path(snap.location)
    assert dv_path == "deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin"
    assert (table / dv_path).is_file()
    # The DELETE replaced the file without a DV by the same file with one: one tombstone.
    (tombstone,) = snap.tombstones
    assert tombstone.relative_path == live.relative_path
    assert tombstone.deletion_vector is None


def test_z85_decodes_reference_vector() -> None:
    # Test vector of the ZeroMQ Z85 specification (RFC 32).
    assert z85_decode("HelloWorld") == bytes([0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B])


def test_url_encoded_partition_paths_are_decoded(fixture_table) -> None:
    table = fixture_table("table_with_column_mapping")
    snap = read_snapshot(str(table))
    for f in snap.files:
        assert f.relative_path is not None
        assert (table / f.relative_path).is_file(), f.relative_path


def test_absolute_paths_inside_and_outside_the_root(tmp_path: Path, fixture_table) -> None:
    table = fixture_table("table-without-dv-small")
    (live,) = read_snapshot(str(table)).files
    commit = [
        {"commitInfo": {"timestamp": 1, "operation": "WRITE"}},
        {
            "add": {
                "path": f"file://{table}/{live.relative_path}",
                "size": 1,
                "modificationTime": 1,
                "partitionValues": {},
                "dataChange": True,
            }
        },
        {
            "add": {
                "path": f"file://{tmp_path}/elsewhere.parquet",
                "size": 1,
                "modificationTime": 1,
                "partitionValues": {},
                "dataChange": True,
            }
        },
    ]
    (table / "_delta_log" / "00000000000000000001.json").write_text(
        "\n".join(json.dumps(a) for a in commit) + "\n"
    )
    snap = read_snapshot(str(table))
    # As Delta keys them (the URI of the path string), the absolute spelling of the live file
    # is another action than the relative one: both are live, and both map to the one
    # physical file; the other lies outside.
    rel = sorted((f.relative_path or "<outside>") for f in snap.files)
    assert rel == sorted([live.relative_path, live.relative_path, "<outside>"])


def test_missing_commit_without_checkpoint_is_an_error(fixture_table) -> None:
    table = fixture_table("cdf-table")
    (table / "_delta_log" / "00000000000000000001.json").unlink()
    with pytest.raises(DeltaLogError, match=r"commit\(s\) \[1\] are missing"):
        read_snapshot(str(table))


def test_not_a_table(tmp_path: Path) -> None:
    with pytest.raises(TableNotFoundError, match="no Delta table"):
        read_snapshot(str(tmp_path))


def test_history_lists_operations_newest_first(fixture_table) -> None:
    table = fixture_table("cdf-table")
    history = read_history(str(table))
    assert [c.version for c in history] == [3, 2, 1, 0]
    reference = DeltaTable(str(table)).history()
    assert [c.operation for c in history] == [h["operation"] for h in reference]


def test_multi_part_checkpoint(fixture_table) -> None:
    import pyarrow.parquet as pq

    table = fixture_table("simple_table_with_checkpoint")
    log = table / "_delta_log"
    before = read_snapshot(str(table))
    single = log / "00000000000000000010.checkpoint.parquet"
    rows = pq.read_table(single)
    half = rows.num_rows // 2
    pq.write_table(
        rows.slice(0, half), log / "00000000000000000010.checkpoint.0000000001.0000000002.parquet"
    )
    pq.write_table(
        rows.slice(half), log / "00000000000000000010.checkpoint.0000000002.0000000002.parquet"
    )
    single.unlink()
    (log / "_last_checkpoint").unlink()
    after = read_snapshot(str(table))
    assert after.checkpoint_version == 10
    assert sorted(f.relative_path for f in after.files) == sorted(
        f.relative_path for f in before.files
    )
    # an incomplete multi-part checkpoint is not used: the commits rebuild the table instead
    (log / "00000000000000000010.checkpoint.0000000002.0000000002.parquet").unlink()
    partial = read_snapshot(str(table))
    assert partial.checkpoint_version is None
    assert sorted(f.relative_path for f in partial.files) == sorted(
        f.relative_path for f in before.files
    )


def add(**overrides: object) -> dict[str, object]:
    action: dict[str, object] = {
        "path": "extra.parquet",
        "partitionValues": {},
        "size": 10,
        "modificationTime": 1,
        "dataChange": True,
    }
    action.update(overrides)
    return {"add": action}


def test_version_gap_is_refused(fixture_table) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    append_commit(table, json.dumps(add()))
    append_commit(table, json.dumps(add(path="more.parquet")))
    (table / "_delta_log" / f"{11:020d}.json").unlink()
    with pytest.raises(DeltaLogError, match=r"commit\(s\) \[11\] are missing"):
        read_snapshot(str(table))


def test_missing_checkpoint_named_by_last_checkpoint(fixture_table) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    (table / "_delta_log" / f"{10:020d}.checkpoint.parquet").unlink()
    assert read_snapshot(str(table)).version == 10  # the commits stand in for it
    for v in range(3):
        (table / "_delta_log" / f"{v:020d}.json").unlink()
    with pytest.raises(
        DeltaLogError, match="_last_checkpoint names version 10, whose checkpoint is missing"
    ):
        read_snapshot(str(table))


def test_a_truncated_commit_line_names_the_last_intact_version_and_the_way_on(
    fixture_table,
) -> None:
    table = fixture_table("simple_table_with_checkpoint")  # checkpoint 10, the latest version
    commit = append_commit(table, '{"add": {"path": "extra.par')  # version 11, cut short
    with pytest.raises(
        DeltaLogError,
        match=rf"^{table}/_delta_log/{commit.name}, line 2: not valid JSON \(.*\)\. Commit 11 is "
        r"damaged \(it is the latest commit\); version 10 is the last intact version "
        r"\(checkpoint 10 read without fault\); no op runs on a log it cannot read completely\. "
        rf"To go on, restore _delta_log/{commit.name} from a backup \(or the object store's "
        r"earlier version of it\), then run the op again; or, without a backup, read the table "
        r"as of version 10 \(time travel: VERSION AS OF 10, which stops before the damage\) and "
        r"write it to a new location \(CREATE TABLE \.\.\. AS SELECT\), the commits from 11 on "
        r"being lost\.$",
    ):
        read_snapshot(str(table))
    # what it says is intact is: the version it names reads
    assert read_snapshot(str(table), version=10).version == 10

    append_commit(table, json.dumps({"txn": {"appId": "a", "version": 1}}))  # version 12 on it
    with pytest.raises(
        DeltaLogError,
        match=r"Commit 11 is damaged \(the 1 later commit\(s\) \(12\) build on it\); version 10 "
        r"is the last intact version",
    ):
        read_snapshot(str(table))


def test_a_damaged_first_commit_has_no_intact_version(fixture_table) -> None:
    table = fixture_table("delta-0.8.0-partitioned")
    first = table / "_delta_log" / f"{0:020d}.json"
    first.write_text(first.read_text()[:-30])
    with pytest.raises(
        DeltaLogError,
        match=r"Commit 0 is damaged and no earlier version exists \(it is the latest commit\); "
        r"no op runs on a log it cannot read completely\. To go on, "
        rf"restore _delta_log/{first.name} from a backup .*, then run the op again\.$",
    ):
        read_snapshot(str(table))
