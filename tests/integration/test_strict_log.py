"""Strict log reading: a malformed log is refused, naming file and line; nothing is deleted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from python_ops.delta.state.snapshot import read_snapshot
from python_ops.errors import DeltaLogError
from tests.helpers.trust import append_commit, cli, files_on_disk
from tests.helpers.vacuum import age_everything, untracked

LIVE = "part-00000-f0e955c5-a1e3-4eec-834e-dcc098fc9005-c000.snappy.parquet"


def add(**overrides: object) -> dict[str, object]:
    action: dict[str, object] = {
        "path": "extra.parquet",
        "partitionValues": {},
        "size": 10,
        "modificationTime": 1,
        "dataChange": True,
    }
    action.update(overrides)
    return {"add": {k: v for k, v in action.items() if v is not None}}


CORRUPTIONS = {
    "non-object line": ('[{"add": {"path": "extra.parquet"}}]', "expected a JSON object"),
    "truncated line": ('{"add": {"path": "extra.par', "not valid JSON"),
    "two actions in one line": (
        json.dumps({**add(), "remove": {"path": "x"}}),
        "expected a JSON object holding one action",
    ),
    "unknown action": (json.dumps({"addFile": {"path": "x"}}), "unknown action type 'addFile'"),
    "add without path": (json.dumps(add(path=None)), "field 'path' must be a non-empty string"),
    "non-numeric size": (json.dumps(add(size="12x")), "field 'size' must be a whole number"),
    "size missing": (json.dumps(add(size=None)), "required field 'size' is missing"),
    "boolean as size": (json.dumps(add(size=True)), "field 'size' must be a whole number"),
    "partition values not strings": (
        json.dumps(add(partitionValues={"a": 1})),
        "is not a string or null",
    ),
    "dataChange not a boolean": (json.dumps(add(dataChange="yes")), "'dataChange' must be true"),
    "DV of bad length": (
        json.dumps(
            add(
                deletionVector={
                    "storageType": "u",
                    "pathOrInlineDv": "ab^-aqEH",
                    "sizeInBytes": 1,
                    "cardinality": 1,
                }
            )
        ),
        "is not a Z85 UUID",
    ),
    "DV of unknown storage type": (
        json.dumps(
            add(
                deletionVector={
                    "storageType": "x",
                    "pathOrInlineDv": "a",
                    "sizeInBytes": 1,
                    "cardinality": 1,
                }
            )
        ),
        "unknown storageType 'x'",
    ),
    "protocol with a string version": (
        json.dumps({"protocol": {"minReaderVersion": "1", "minWriterVersion": 2}}),
        "'minReaderVersion' must be a whole number",
    ),
    "metaData with a schema that is not a string": (
        json.dumps(
            {
                "metaData": {
                    "id": "x",
                    "schemaString": {"fields": []},
                    "partitionColumns": [],
                    "configuration": {},
                }
            }
        ),
        "field 'schemaString' must be a non-empty string",
    ),
}


@pytest.mark.parametrize("case", list(CORRUPTIONS))
def test_malformed_action_is_refused_naming_file_and_line(
    fixture_table, sail_spark, case: str
) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    line, problem = CORRUPTIONS[case]
    commit = append_commit(table, line)
    with pytest.raises(DeltaLogError, match=rf"{commit.name}, line 2: .*{problem}"):
        read_snapshot(str(table))
    # and no destructive op runs on it: VACUUM with zero retention deletes nothing
    untracked(table, "stray.parquet")
    age_everything(table, days=60)
    before = files_on_disk(table)
    code, out, err = cli(
        ["vacuum", str(table), "--retention-hours", "0", "--allow-short-retention"], sail_spark
    )
    assert code == 2
    assert commit.name in err
    assert "Traceback" not in out + err
    assert files_on_disk(table) == before
    code, _, err = cli(["cleanup-logs", str(table), "--retention-days", "0"], sail_spark)
    assert code == 2
    assert files_on_disk(table) == before


def test_the_referenced_file_of_a_non_object_line_is_never_vacuumed(
    fixture_table, sail_spark
) -> None:
    """The reported bug: a list-wrapped add was skipped and its file deleted."""
    table = fixture_table("simple_table_with_checkpoint")
    (table / "only-here.parquet").write_bytes((table / LIVE).read_bytes())
    append_commit(table, json.dumps([add(path="only-here.parquet")["add"]]))
    age_everything(table, days=60)
    code, _, err = cli(
        ["vacuum", str(table), "--retention-hours", "0", "--allow-short-retention"], sail_spark
    )
    assert code == 2
    assert "line 2" in err
    assert (table / "only-here.parquet").exists()


def test_cleanup_on_missing_checkpoint_is_a_named_error(fixture_table, sail_spark) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    (table / "_delta_log" / f"{10:020d}.checkpoint.parquet").unlink()
    for v in range(3):
        (table / "_delta_log" / f"{v:020d}.json").unlink()
    age_everything(table, days=60)
    before = files_on_disk(table)
    code, out, err = cli(["cleanup-logs", str(table)], sail_spark)
    assert code == 2
    assert "Traceback" not in out + err
    assert files_on_disk(table) == before


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["vacuum", "{t}", "--retention-hours", "nan"], "retention_hours"),
        (["vacuum", "{t}", "--retention-hours", "inf"], "retention_hours"),
        (["vacuum", "{t}", "--retention-hours", "-1"], "retention_hours"),
        (["vacuum", "{t}", "--workers", "0"], "max_workers"),
        (["cleanup-logs", "{t}", "--retention-days", "nan"], "retention_days"),
        (["cleanup-logs", "{t}", "--retention-days", "1e308"], "retention_days"),
        (["optimize", "{t}", "--target-size", "0"], "target_size_bytes"),
        (["optimize", "{t}", "--min-small-files", "1"], "min_small_files"),
        (["optimize", "{t}", "--where", "id = 1"], "where"),
    ],
)
def test_bad_numbers_are_named_errors(
    fixture_table, sail_spark, argv: list[str], named: str
) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    before = files_on_disk(table)
    code, out, err = cli([a.replace("{t}", str(table)) for a in argv], sail_spark)
    assert code == 2, err
    assert f"setting '{named}' has bad value" in err
    assert "Traceback" not in out + err
    assert files_on_disk(table) == before


def test_the_process_prints_no_traceback_for_an_unexpected_error(tmp_path: Path) -> None:
    import subprocess
    import sys

    # a directory that is not a table but whose _delta_log is a file: an OSError inside listing
    (tmp_path / "_delta_log").write_text("not a directory")
    done = subprocess.run(
        [sys.executable, "-m", "python_ops", "health", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (1, 2)
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("error:")


def test_absurd_retention_property_is_a_named_error(fixture_table, sail_spark) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    snap = read_snapshot(str(table))
    meta = {
        "id": snap.metadata.table_id,
        "format": {"provider": "parquet", "options": {}},
        "schemaString": snap.metadata.schema_string,
        "partitionColumns": [],
        "configuration": {"delta.deletedFileRetentionDuration": "interval 99999999999999 weeks"},
    }
    append_commit(table, {"metaData": meta})
    code, _, err = cli(["vacuum", str(table), "--dry-run"], sail_spark)
    assert code == 2
    assert "setting 'delta.deletedFileRetentionDuration' has bad value" in err
    assert "at most 100 years" in err


def test_metadata_without_schema_is_read_as_delta_reads_it_and_never_rewritten(
    tmp_path: Path, sail_spark
) -> None:
    from tests.helpers.paths import GOLDEN, NEEDS_SHARED

    source = GOLDEN / "deltalog-commit-info"
    if not source.is_dir():
        pytest.skip(NEEDS_SHARED)
    table = tmp_path / "t"
    import shutil

    shutil.copytree(source, table)
    snapshot = read_snapshot(str(table))
    # Delta's Metadata.schema: no schemaString is the empty struct
    assert snapshot.metadata.schema_missing
    assert snapshot.metadata.schema_fields() == []
    code, _, err = cli(["vacuum", str(table), "--dry-run"], sail_spark)
    assert code == 0, err
    before = files_on_disk(table)
    code, _, err = cli(["optimize", str(table)], sail_spark)
    assert code == 2
    assert "no schemaString" in err
    assert "would drop every column" in err
    assert files_on_disk(table) == before
