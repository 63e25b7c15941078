"""The protocol gate: unknown features and versions refused by every op, before it touches data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from python_ops.delta.log_files import LogFileKind, classify
from python_ops.delta.protocol import FEATURES, Op, check_protocol, support_table, table_features
from python_ops.errors import DeltaLogError, UnsupportedFeatureError
from python_ops.ops.log_cleanup import cleanup_logs, commit_timestamps
from python_ops.ops.optimize.plan import plan_optimize
from python_ops.storage import open_storage
from tests.trust_helpers import append_commit, cli, files_on_disk
from tests.vacuum_helpers import age_everything, untracked

ROOT = Path(__file__).resolve().parent.parent

UNKNOWN_READER = {
    "minReaderVersion": 3,
    "minWriterVersion": 7,
    "readerFeatures": ["futureReaderFeature"],
    "writerFeatures": ["futureReaderFeature"],
}
UNKNOWN_WRITER = {"minReaderVersion": 1, "minWriterVersion": 7, "writerFeatures": ["futureWriter"]}
ABOVE_KNOWN = {"minReaderVersion": 4, "minWriterVersion": 8}

DESTRUCTIVE = {
    "vacuum": ["vacuum", "{t}", "--retention-hours", "0", "--allow-short-retention"],
    "cleanup-logs": ["cleanup-logs", "{t}", "--retention-days", "0"],
    "optimize": ["optimize", "{t}"],
    "optimize z-order": ["optimize", "{t}", "--zorder-by", "id"],
}


@pytest.mark.parametrize(
    ("protocol", "named"),
    [
        (UNKNOWN_READER, "futureReaderFeature"),
        (UNKNOWN_WRITER, "futureWriter"),
        (ABOVE_KNOWN, "protocol 4/8"),
    ],
    ids=["unknown-reader-feature", "unknown-writer-feature", "version-above-known"],
)
@pytest.mark.parametrize("op", list(DESTRUCTIVE))
def test_destructive_ops_refuse_and_delete_nothing(
    fixture_table, sail_spark, protocol: dict[str, object], named: str, op: str
) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    append_commit(table, {"protocol": protocol})
    untracked(table, "stray.parquet")
    age_everything(table, days=60)
    before = files_on_disk(table)
    argv = [a.replace("{t}", str(table)) for a in DESTRUCTIVE[op]]
    code, out, err = cli(argv, sail_spark)
    assert code == 2, err
    assert f"table feature '{named}'" in err
    assert "Nothing was listed, written or deleted" in err
    assert "Traceback" not in err + out
    assert files_on_disk(table) == before


def test_health_refuses_an_unknown_reader_feature(fixture_table, sail_spark) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    append_commit(table, {"protocol": UNKNOWN_READER})
    code, _, err = cli(["health", str(table)], sail_spark)
    assert code == 2
    assert "futureReaderFeature" in err


def test_every_feature_of_the_golden_tables_is_decided() -> None:
    # the names seen in the golden corpus and in Delta 4.x's PROTOCOL.md
    for name in (
        "appendOnly",
        "invariants",
        "checkConstraints",
        "changeDataFeed",
        "generatedColumns",
        "columnMapping",
        "identityColumns",
        "deletionVectors",
        "rowTracking",
        "timestampNtz",
        "domainMetadata",
        "v2Checkpoint",
        "icebergCompatV1",
        "icebergCompatV2",
        "clustering",
        "vacuumProtocolCheck",
        "inCommitTimestamp",
        "inCommitTimestamp-preview",
        "typeWidening",
        "typeWidening-preview",
        "variantType",
        "variantType-preview",
        "collations",
        "collations-preview",
        "checkpointProtection",
        "catalogManaged",
        "allowColumnDefaults",
        "materializePartitionColumns",
        "redirectReaderWriter-preview",
        "timestampNanos",
    ):
        assert name in FEATURES, name


def test_legacy_versions_imply_their_features() -> None:
    features = table_features({"minReaderVersion": 2, "minWriterVersion": 5}, location="t")
    assert features.reader == {"columnMapping"}
    assert {"appendOnly", "invariants", "checkConstraints", "changeDataFeed"} <= features.writer
    assert "identityColumns" not in features.writer
    with pytest.raises(UnsupportedFeatureError, match="readerFeatures are listed"):
        table_features(
            {"minReaderVersion": 2, "minWriterVersion": 7, "readerFeatures": ["x"]}, location="t"
        )
    with pytest.raises(UnsupportedFeatureError, match="must also be listed in writerFeatures"):
        table_features(
            {
                "minReaderVersion": 3,
                "minWriterVersion": 7,
                "readerFeatures": ["deletionVectors"],
                "writerFeatures": [],
            },
            location="t",
        )


@pytest.mark.parametrize(
    ("feature", "op", "refused"),
    [
        ("deletionVectors", Op.VACUUM, False),
        ("deletionVectors", Op.COMPACTION, True),
        ("catalogManaged", Op.VACUUM, True),
        ("catalogManaged", Op.CLEANUP_LOGS, True),
        ("rowTracking", Op.ZORDER, True),
        ("clustering", Op.COMPACTION, True),
        ("v2Checkpoint", Op.CHECKPOINT, True),
        ("v2Checkpoint", Op.CLEANUP_LOGS, False),
        ("inCommitTimestamp", Op.CLEANUP_LOGS, False),
        ("icebergCompatV2", Op.VACUUM, True),
        ("timestampNtz", Op.ZORDER, False),
        ("inCommitTimestamp-preview", Op.CLEANUP_LOGS, False),
        ("inCommitTimestamp-preview", Op.PROPERTIES, True),
        ("redirectWriterOnly-preview", Op.HEALTH, True),
        ("materializePartitionColumns", Op.VACUUM, False),
        ("materializePartitionColumns", Op.COMPACTION, True),
    ],
)
def test_decisions(feature: str, op: Op, refused: bool) -> None:
    protocol = {
        "minReaderVersion": 3,
        "minWriterVersion": 7,
        "readerFeatures": [feature] if FEATURES[feature].reader else [],
        "writerFeatures": [feature],
    }
    if refused:
        with pytest.raises(UnsupportedFeatureError, match=f"'{feature}'"):
            check_protocol(protocol, op, location="t")
    else:
        check_protocol(protocol, op, location="t")


def test_writer_ops_refuse_unsupported_features_before_planning(fixture_table) -> None:
    table = fixture_table("table-with-dv-small")
    with pytest.raises(UnsupportedFeatureError, match=r"compaction refused.*deletionVectors"):
        plan_optimize(str(table))


def test_checkpoint_not_written_for_a_feature_delta_rs_cannot_carry(fixture_table) -> None:
    table = fixture_table("checkpoint-v2-table")
    age_everything(table, days=60)
    result = cleanup_logs(str(table), dry_run=True, retention_days=1)
    assert result.checkpoint_first is None
    assert (result.checkpoint_not_written or "").startswith("no checkpoint written: table feature")


def test_readme_holds_the_support_table() -> None:
    readme = (ROOT / "README.md").read_text()
    assert support_table() in readme


@pytest.mark.parametrize("suffix", ["", "-preview"])
def test_in_commit_timestamps_time_the_log_from_the_enablement_version(
    fixture_table, suffix: str
) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    age_everything(table, days=60)
    stamp = 1_900_000_000_000
    enabled = append_commit(
        table,
        {
            "protocol": {
                "minReaderVersion": 1,
                "minWriterVersion": 7,
                "writerFeatures": ["appendOnly", "invariants", "inCommitTimestamp" + suffix],
            }
        },
    )
    version = int(enabled.name[:20])
    lines = enabled.read_text().splitlines()
    lines[0] = json.dumps({"commitInfo": {"timestamp": 1, "inCommitTimestamp": stamp}})
    enabled.write_text("\n".join(lines) + "\n")
    storage = open_storage(str(table))
    files = [classify(e) for e in storage.list_dir("_delta_log") if not e.is_dir]
    configuration = {
        f"delta.enableInCommitTimestamps{suffix}": "true",
        f"delta.inCommitTimestampEnablementVersion{suffix}": str(version),
    }
    timed = {
        f.name: f.modification_time_ms for f in commit_timestamps(storage, files, configuration)
    }
    assert timed[enabled.name] == stamp
    # Commits before the enablement version keep their file times.
    before = next(f for f in files if f.version == version - 1 and f.kind is LogFileKind.COMMIT)
    assert timed[before.name] == before.modification_time_ms < stamp
    # A commit from the enablement version on without its timestamp is a malformed log.
    missing = append_commit(table, {"commitInfo": {"timestamp": 2}})
    missing.write_text(json.dumps({"commitInfo": {"timestamp": 2}}) + "\n")
    files = [classify(e) for e in storage.list_dir("_delta_log") if not e.is_dir]
    with pytest.raises(DeltaLogError, match=f"{missing.name}: the table has in-commit timestamps"):
        commit_timestamps(storage, files, configuration)
