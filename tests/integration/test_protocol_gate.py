"""The protocol gate: unknown features and versions refused by every op, before it touches data."""

from __future__ import annotations

import pytest

from tests.helpers.trust import append_commit, cli, files_on_disk
from tests.helpers.vacuum import age_everything, untracked

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
