"""The protocol gate's tables: which Delta table features each op supports, refuses or rules.

Pure decisions (``FEATURES``, ``table_features``, ``check_protocol``) and what they mean on the
shared fixture tables' protocols and logs; nothing here runs an engine. That every op refuses
before touching data, through the CLI, is in ``tests/integration/test_protocol_gate.py``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

from python_ops.delta.log.log_files import LogFileKind, classify
from python_ops.delta.state.snapshot import Snapshot, read_snapshot
from python_ops.delta.table.features import (
    DELTA_WRITES,
    FEATURES,
    REWRITE_OPS,
    Op,
    Verdict,
    Writer,
    support_table,
)
from python_ops.delta.table.protocol import check_protocol, table_features
from python_ops.delta.writing.local_writer import LOCAL_DELTA_ENV
from python_ops.errors import DeltaLogError, UnsupportedFeatureError
from python_ops.ops.log_cleanup import cleanup_logs, commit_timestamps
from python_ops.ops.optimize.planning.plan import plan_optimize
from python_ops.storage import open_storage
from tests.helpers.paths import ROOT, delta_table_names, shared_table
from tests.helpers.trust import append_commit
from tests.helpers.vacuum import age_everything


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
        ("deletionVectors", Op.COMPACTION, False),  # written here: deleted rows dropped
        ("deletionVectors", Op.CHECKPOINT, True),
        ("catalogManaged", Op.VACUUM, True),
        ("catalogManaged", Op.CLEANUP_LOGS, True),
        ("rowTracking", Op.ZORDER, True),
        ("clustering", Op.COMPACTION, True),
        ("v2Checkpoint", Op.CHECKPOINT, True),
        ("v2Checkpoint", Op.CLEANUP_LOGS, False),
        ("inCommitTimestamp", Op.CLEANUP_LOGS, False),
        ("icebergCompatV2", Op.VACUUM, True),
        ("timestampNtz", Op.ZORDER, False),
        ("inCommitTimestamp-preview", Op.CLEANUP_LOGS, True),  # a name Delta 4.4 refuses
        ("inCommitTimestamp-preview", Op.HEALTH, False),
        ("liquid", Op.VACUUM, True),
        ("collations", Op.VACUUM, True),
        ("collations-preview", Op.CLEANUP_LOGS, True),
        ("collations", Op.HEALTH, False),
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


@pytest.mark.parametrize(
    ("feature", "op", "verdict"),
    [
        # delta-rs limits: Delta's own OPTIMIZE writes these features
        ("deletionVectors", Op.COMPACTION, Verdict.RULE),
        ("columnMapping", Op.ZORDER, Verdict.RULE),  # name mode here; id mode: Delta
        ("rowTracking", Op.COMPACTION, Verdict.SUPPORTED),
        ("v2Checkpoint", Op.COMPACTION, Verdict.RULE),  # here: one JSON commit, no checkpoint
        ("identityColumns", Op.COMPACTION, Verdict.RULE),  # here: no identity value written
        ("inCommitTimestamp", Op.ZORDER, Verdict.RULE),  # here: the commit carries one
        ("typeWidening", Op.COMPACTION, Verdict.SUPPORTED),
        ("domainMetadata", Op.COMPACTION, Verdict.SUPPORTED),
        ("clustering", Op.COMPACTION, Verdict.RULE),  # Delta clusters the table
        ("changeDataFeed", Op.COMPACTION, Verdict.RULE),  # the recorded rule still holds
        # refused whoever writes, or unknown to Delta 4.4
        ("catalogManaged", Op.COMPACTION, Verdict.REFUSED),
        ("redirectWriterOnly-preview", Op.ZORDER, Verdict.REFUSED),
        ("timestampNanos", Op.COMPACTION, Verdict.REFUSED),
        ("collations", Op.COMPACTION, Verdict.REFUSED),
        ("inCommitTimestamp-preview", Op.COMPACTION, Verdict.REFUSED),
        # Delta writes checkpoints of the tables delta-rs cannot checkpoint (local writer)
        ("v2Checkpoint", Op.CHECKPOINT, Verdict.SUPPORTED),
        ("deletionVectors", Op.CHECKPOINT, Verdict.SUPPORTED),
        ("inCommitTimestamp", Op.CHECKPOINT, Verdict.SUPPORTED),
        ("identityColumns", Op.CHECKPOINT, Verdict.SUPPORTED),
        ("typeWidening", Op.CHECKPOINT, Verdict.SUPPORTED),
        ("clustering", Op.CHECKPOINT, Verdict.SUPPORTED),  # no clustering rule: not a rewrite
        # Databricks' preview name of clustering: Delta 4.4 does not know it
        ("liquid", Op.COMPACTION, Verdict.REFUSED),
        ("liquid", Op.CHECKPOINT, Verdict.REFUSED),
        # the table properties stay delta-rs's
        ("deletionVectors", Op.PROPERTIES, Verdict.REFUSED),
    ],
)
def test_the_gate_asks_delta_when_delta_rewrites(feature: str, op: Op, verdict: Verdict) -> None:
    assert FEATURES[feature].decision(op, Writer.DELTA).verdict is verdict
    protocol = {
        "minReaderVersion": 3,
        "minWriterVersion": 7,
        "readerFeatures": [feature] if FEATURES[feature].reader else [],
        "writerFeatures": [feature],
    }
    if verdict is Verdict.REFUSED:
        with pytest.raises(UnsupportedFeatureError, match=f"'{feature}'"):
            check_protocol(protocol, op, location="t", writer=Writer.DELTA)
    else:
        check_protocol(protocol, op, location="t", writer=Writer.DELTA)


def test_delta_writes_every_feature_delta_rs_writes_for_the_rewrite_ops() -> None:
    # so a table delta-rs may rewrite is one Delta may rewrite (the executor relies on it)
    for feature in FEATURES.values():
        for op in REWRITE_OPS:
            if feature.decision(op).verdict is not Verdict.REFUSED:
                assert feature.decision(op, Writer.DELTA).verdict is not Verdict.REFUSED, (
                    feature.name,
                    op,
                )


def test_writer_ops_refuse_unsupported_features_before_planning() -> None:
    import dataclasses

    table = shared_table("checkpoint-v2-table")  # planning reads only: the original will do
    snapshot = read_snapshot(str(table))
    protocol = dict(snapshot.protocol)
    protocol["writerFeatures"] = [*protocol["writerFeatures"], "domainMetadata", "rowTracking"]
    refused = r"compaction refused.*(domainMetadata|rowTracking)"
    with pytest.raises(UnsupportedFeatureError, match=refused):
        plan_optimize(str(table), snapshot=dataclasses.replace(snapshot, protocol=protocol))


def test_checkpoint_not_written_for_a_feature_delta_rs_cannot_carry(
    fixture_table, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = fixture_table("checkpoint-v2-table")
    age_everything(table, days=60)
    # Delta's own writer (a local Spark with Delta) would write it: planned for Delta
    planned = cleanup_logs(str(table), dry_run=True, retention_days=1)
    assert planned.checkpoint_first == planned.table_version
    assert planned.checkpoint_writer == "Delta"
    assert planned.checkpoint_not_written is None
    # without a Delta writer here, none is written and the reason says what would write it
    monkeypatch.setenv(LOCAL_DELTA_ENV, "off")
    result = cleanup_logs(str(table), dry_run=True, retention_days=1)
    assert result.checkpoint_first is None
    assert result.checkpoint_writer is None
    assert re.match(
        r"no checkpoint written: table feature '\w+': .*Delta's own writer .* would "
        r"write it, but here SPARKDELTA_LOCAL_DELTA=off turns it off",
        result.checkpoint_not_written or "",
    )


@pytest.mark.parametrize(
    ("preview", "released"),
    [
        ("liquid", "clustering"),
        ("inCommitTimestamp-preview", "inCommitTimestamp"),
        ("typeWidening-preview", "typeWidening"),
        ("variantType-preview", "variantType"),
        ("collations-preview", "collations"),
    ],
)
def test_a_preview_name_is_decided_as_its_released_feature_or_as_delta_refuses_it(
    preview: str, released: str
) -> None:
    # the preview's semantics are documented as the released one's; a name Delta 4.4 does not
    # know is refused for every op that changes the table, as Delta refuses it (right or refuse)
    for op in Op:
        decision = FEATURES[preview].decision(op)
        if preview in DELTA_WRITES or op is Op.HEALTH:
            assert decision == FEATURES[released].decision(op), op
        else:
            assert decision.verdict is Verdict.REFUSED, op
            assert "Delta 4.4 does not know this feature name" in decision.reason
    assert FEATURES[preview].reader == FEATURES[released].reader


def test_an_unknown_preview_name_stays_refused() -> None:
    protocol = {
        "minReaderVersion": 3,
        "minWriterVersion": 7,
        "readerFeatures": [],
        "writerFeatures": ["rowTracking-preview"],
    }
    with pytest.raises(UnsupportedFeatureError, match=r"'rowTracking-preview'.*unknown"):
        check_protocol(protocol, Op.VACUUM, location="t")


def test_docs_hold_the_support_table() -> None:
    page = (ROOT / "docs" / "right-or-refuse.md").read_text()
    assert support_table() in page


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


@pytest.mark.parametrize(
    ("protocol", "problem"),
    [
        ({"minReaderVersion": 0, "minWriterVersion": 2}, "reader 0 / writer 2 is invalid"),
        ({"minReaderVersion": 4, "minWriterVersion": 7}, "above the newest this project knows"),
        ({"minReaderVersion": 1, "minWriterVersion": 8}, "above the newest this project knows"),
        (
            {"minReaderVersion": 1, "minWriterVersion": 5, "writerFeatures": ["appendOnly"]},
            "writerFeatures are listed although minWriterVersion is not 7",
        ),
        (
            {"minReaderVersion": 3, "minWriterVersion": 5, "readerFeatures": []},
            "minReaderVersion 3 requires minWriterVersion 7",
        ),
        ({"minReaderVersion": 1, "minWriterVersion": 7}, "requires a writerFeatures list"),
    ],
)
def test_inconsistent_protocols_are_refused(protocol: dict[str, object], problem: str) -> None:
    with pytest.raises(UnsupportedFeatureError, match=problem):
        table_features(protocol, location="t")


def test_table_features_of_explicit_lists() -> None:
    features = table_features(
        {
            "minReaderVersion": 3,
            "minWriterVersion": 7,
            "readerFeatures": ["deletionVectors"],
            "writerFeatures": ["deletionVectors", "appendOnly"],
        },
        location="t",
    )
    assert features.reader == {"deletionVectors"}
    assert features.writer == {"deletionVectors", "appendOnly"}
    assert features.all == {"deletionVectors", "appendOnly"}
    legacy = table_features({"minReaderVersion": 1, "minWriterVersion": 1}, location="t")
    assert legacy.all == frozenset()


def test_check_protocol_names_the_features_whose_rule_applies() -> None:
    dv = {
        "minReaderVersion": 3,
        "minWriterVersion": 7,
        "readerFeatures": ["deletionVectors"],
        "writerFeatures": ["deletionVectors"],
    }
    assert check_protocol(dv, Op.VACUUM, location="t") == ("deletionVectors",)
    assert check_protocol(dv, Op.HEALTH, location="t") == ()
    assert FEATURES["deletionVectors"].decision(Op.VACUUM).verdict is Verdict.RULE
    assert FEATURES["deletionVectors"].decision(Op.COMPACTION).verdict is Verdict.RULE
    assert FEATURES["deletionVectors"].decision(Op.CHECKPOINT).verdict is Verdict.REFUSED
    unknown = {"minReaderVersion": 1, "minWriterVersion": 7, "writerFeatures": ["futureX"]}
    with pytest.raises(UnsupportedFeatureError, match=r"'futureX'.*unknown to this project"):
        check_protocol(unknown, Op.HEALTH, location="t")


# What each op may do on the shared fixture tables: "rule: ..." lists the ruled features.
EXPECTED_ON_FIXTURES = {
    "table-with-dv-small": {
        Op.VACUUM: ("deletionVectors",),
        Op.COMPACTION: ("deletionVectors",),
        Op.CHECKPOINT: "refused",
    },
    "table_with_column_mapping": {
        Op.VACUUM: ("changeDataFeed", "columnMapping"),
        # name mode: rewritten here by physical names (each other feature's rule holds)
        Op.COMPACTION: (
            "appendOnly",
            "changeDataFeed",
            "checkConstraints",
            "columnMapping",
            "generatedColumns",
            "invariants",
        ),
        Op.CLEANUP_LOGS: (),
    },
    "checkpoint-v2-table": {Op.CLEANUP_LOGS: ("v2Checkpoint",), Op.CHECKPOINT: "refused"},
    "cdf-table": {Op.VACUUM: ("changeDataFeed",), Op.CHECKPOINT: ()},
}


@pytest.mark.parametrize("name", delta_table_names())
def test_every_fixture_table_is_decided_for_every_op(
    shared_snapshot: Callable[[str], Snapshot], name: str
) -> None:
    protocol = shared_snapshot(name).protocol
    expected = EXPECTED_ON_FIXTURES.get(name, {})
    for op in Op:
        try:
            outcome: object = check_protocol(protocol, op, location=name)
        except UnsupportedFeatureError as err:
            outcome = "unknown" if "unknown to this project" in str(err) else "refused"
        assert outcome != "unknown", (name, op)  # every feature is decided
        if op in expected:
            assert outcome == expected[op], (name, op)
        if op is Op.HEALTH:
            assert outcome != "refused", name  # every fixture can be inspected
