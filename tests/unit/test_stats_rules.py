"""The statistics op's rules without an engine: Delta's spelling of bounds, its statistics
columns, what a file's stats lack, footer or rows, and the protocol gate for ``stats``."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from python_ops.delta.log.log_files import LogFileKind, classify
from python_ops.delta.table.features import Op
from python_ops.delta.table.protocol import check_protocol
from python_ops.delta.writing.log_commit import staged_name
from python_ops.errors import StatsUnsupportedError, UnsupportedFeatureError
from python_ops.ops.stats.columns import (
    STATS_COLUMNS,
    StatsField,
    check_supported_types,
    indexed_fields,
    split_column_list,
    widened_stats_columns,
)
from python_ops.ops.stats.compute import file_stats
from python_ops.ops.stats.delta_json import (
    double_value,
    float_value,
    string_max,
    string_min,
    timestamp_value,
)
from python_ops.ops.stats.stats_json import missing_columns, stats_json
from python_ops.storage.base import FileEntry


def test_strings_are_cut_as_delta_cuts_them() -> None:
    text = "abcdefghijklmnopqrstuvwxyz0123456789"
    assert string_min(text, 32) == text[:32]
    assert string_max(text, 32) == text[:32] + "\x7f"  # the ASCII tie-breaker
    assert string_max(text[:32], 32) == text[:32]  # not longer than the prefix: itself
    accents = "é" * 33
    assert string_max(accents, 32) == "é" * 32 + "\U0010ffff"  # not ASCII: U+10FFFF
    # a character outside the BMP is two UTF-16 units: Java's prefix keeps the pair whole
    emoji = "x" * 31 + "\U0001f600" + "tail"
    assert string_max(emoji, 32) == "x" * 31 + "\U0001f600" + "\x7f"
    assert string_min(emoji, 32) == "x" * 31 + "\U0001f600"  # Spark's substring: code points
    # nothing but U+10FFFF after the cut within twice the prefix: no maximum at all
    assert string_max("a" + "\U0010ffff" * 10, 1) is None


def test_timestamps_are_truncated_down_to_milliseconds() -> None:
    assert timestamp_value(1_709_296_496_789_999, utc=True) == "2024-03-01T12:34:56.789Z"
    assert timestamp_value(-999, utc=True) == "1969-12-31T23:59:59.999Z"  # floor, not toward 0
    assert timestamp_value(0, utc=False) == "1970-01-01T00:00:00.000"  # timestamp_ntz: no zone
    micros = int((dt.datetime(999, 1, 2) - dt.datetime(1970, 1, 1)).total_seconds() * 1e6)
    assert timestamp_value(micros, utc=True).startswith("0999-01-02T")


def test_floats_keep_their_own_precision_and_nan_is_a_string() -> None:
    assert str(float_value(float(pa.scalar(0.1, pa.float32()).as_py()))) == "0.1"
    assert double_value(float("nan")) == "NaN"
    assert double_value(float("-inf")) == "-Infinity"
    assert str(double_value(1.5)) == "1.5"


SCHEMA = {
    "fields": [
        {"name": "p", "type": "string"},
        {"name": "a", "type": "long"},
        {
            "name": "s",
            "type": {
                "type": "struct",
                "fields": [{"name": "x", "type": "integer"}, {"name": "y", "type": "string"}],
            },
        },
        {"name": "flag", "type": "boolean"},
        {"name": "c", "type": "date"},
    ]
}


def test_indexed_columns_follow_delta() -> None:
    def names(fields: list[StatsField]) -> list[str]:
        return [
            f.name + (f"({','.join(names(list(f.children)))})" if f.is_struct else "")
            for f in fields
        ]

    # the first N leaves of the schema without partition columns; a struct counts its leaves
    assert names(indexed_fields(SCHEMA, ["p"], {})) == ["a", "s(x,y)", "flag", "c"]
    config = {"delta.dataSkippingNumIndexedCols": "2"}
    assert names(indexed_fields(SCHEMA, ["p"], config)) == ["a", "s(x)"]
    assert names(indexed_fields(SCHEMA, ["p"], {"delta.dataSkippingNumIndexedCols": "-1"})) == [
        "a",
        "s(x,y)",
        "flag",
        "c",
    ]
    listed = {"delta.dataSkippingStatsColumns": "C, s.y", **config}  # the list wins
    assert names(indexed_fields(SCHEMA, ["p"], listed)) == ["s(y)", "c"]
    assert split_column_list("a, `b.c`.d, `x``y`") == [["a"], ["b.c", "d"], ["x`y"]]


def test_a_watched_column_widens_the_statistics_columns() -> None:
    indexed = indexed_fields(SCHEMA, ["p"], {"delta.dataSkippingNumIndexedCols": "3"})
    assert [f.name for f in indexed] == ["a", "s"]
    assert widened_stats_columns(indexed, ["c"]) == "a,s,c"
    assert widened_stats_columns(indexed, ["a"]) is None
    # Delta refuses a boolean in the list: an indexed one is left out of it
    everything = indexed_fields(SCHEMA, ["p"], {})
    assert widened_stats_columns(everything[:3], ["c"]) == "a,s,c"


def test_types_without_delta_rules_are_refused() -> None:
    check_supported_types(
        [StatsField("v", "decimal(10,2)"), StatsField("b", "binary")], location="t"
    )
    with pytest.raises(StatsUnsupportedError, match="'v' of type 'variant'"):
        check_supported_types([StatsField("v", "variant")], location="t")


def test_what_a_files_stats_lack() -> None:
    fields = [StatsField("a", "long"), StatsField("b", "string"), StatsField("f", "boolean")]
    full = {
        "numRecords": 2,
        "minValues": {"a": 1},
        "maxValues": {"a": 2},
        "nullCount": {"a": 0, "b": 2, "f": 0},  # b is all null: no bounds is right
    }
    assert missing_columns(json.dumps(full), fields) == []
    assert missing_columns(None, fields) is None
    assert missing_columns("{not json", fields) is None
    assert missing_columns('{"numRecords": 2}', fields) == ["a", "b", "f"]
    partial = {**full, "nullCount": {"a": 0, "b": 1, "f": 0}}  # b has values but no bounds
    assert missing_columns(json.dumps(partial), fields) == ["b"]
    # a string maximum Delta could not bound (string_max is None) is not missing: a second
    # run would compute the same nothing
    unbounded = {**partial, "minValues": {"a": 1, "b": "x"}}
    assert missing_columns(json.dumps(unbounded), fields) == []


def test_integers_and_dates_come_from_the_footer_strings_from_the_rows(tmp_path: Path) -> None:
    path = tmp_path / "f.parquet"
    table = pa.table(
        {
            "a": pa.array([3, None, -7], pa.int64()),
            "c": pa.array([dt.date(2024, 1, 2), dt.date(2020, 5, 6), None]),
            "b": ["zeta", "alpha", None],
        }
    )
    pq.write_table(table, path, row_group_size=2)
    ints = [StatsField("a", "long"), StatsField("c", "date")]
    footer = file_stats(str(path), ints, string_prefix=32, footer_only=True)
    assert footer is not None
    assert footer.from_footer
    assert (footer.num_records, footer.leaves[("a",)]) == (3, footer.leaves[("a",)])
    assert (footer.leaves[("a",)].low, footer.leaves[("a",)].high) == (-7, 3)
    assert footer.leaves[("c",)].low == "2020-05-06"
    with_string = [*ints, StatsField("b", "string"), StatsField("missing", "long")]
    assert file_stats(str(path), with_string, string_prefix=32, footer_only=True) is None
    full = file_stats(str(path), with_string, string_prefix=32)
    assert full is not None
    assert not full.from_footer
    text = stats_json(with_string, full, tight_bounds=None)
    assert json.loads(text) == {
        "numRecords": 3,
        "minValues": {"a": -7, "c": "2020-05-06", "b": "alpha"},
        "maxValues": {"a": 3, "c": "2024-01-02", "b": "zeta"},
        "nullCount": {"a": 1, "c": 1, "b": 1, "missing": 3},  # a column the file predates
    }


def test_the_protocol_gate_for_stats() -> None:
    dv = {"minReaderVersion": 3, "minWriterVersion": 7}
    ruled = check_protocol(
        {**dv, "readerFeatures": ["deletionVectors"], "writerFeatures": ["deletionVectors"]},
        Op.STATS,
        location="t",
    )
    assert ruled == ("deletionVectors",)
    for feature in ("rowTracking", "inCommitTimestamp", "icebergCompatV2", "typeWidening"):
        with pytest.raises(UnsupportedFeatureError, match=feature):
            check_protocol(
                {**dv, "readerFeatures": [], "writerFeatures": [feature]}, Op.STATS, location="t"
            )
    # column mapping and v2 checkpoints: supported with a rule (physical names; sidecars read)
    assert check_protocol(
        {"minReaderVersion": 2, "minWriterVersion": 5}, Op.STATS, location="t"
    ) == ("columnMapping",)
    v2 = {**dv, "readerFeatures": ["v2Checkpoint"], "writerFeatures": ["v2Checkpoint"]}
    assert check_protocol(v2, Op.STATS, location="t") == ("v2Checkpoint",)


def _mapped_schema() -> dict[str, object]:
    def field(name: str, physical: str, column_id: int, kind: object = "long") -> object:
        meta = {"delta.columnMapping.physicalName": physical, "delta.columnMapping.id": column_id}
        return {"name": name, "type": kind, "nullable": True, "metadata": meta}

    inner = {"type": "struct", "fields": [field("x", "col-x", 3, "integer")]}
    return {"type": "struct", "fields": [field("a", "col-a", 1), field("s", "col-s", 2, inner)]}


def test_mapped_columns_are_read_and_keyed_by_physical_name(tmp_path: Path) -> None:
    config = {"delta.columnMapping.mode": "name"}
    fields = indexed_fields(_mapped_schema(), [], config)
    assert [(f.name, f.stored) for f in fields] == [("a", "col-a"), ("s", "col-s")]
    assert fields[1].children[0].stored == "col-x"
    path = tmp_path / "f.parquet"
    struct = pa.array([{"col-x": 5}, None], pa.struct([("col-x", pa.int32())]))
    pq.write_table(pa.table({"col-a": pa.array([1, 2], pa.int64()), "col-s": struct}), path)
    stats = file_stats(str(path), fields, string_prefix=32)
    assert stats is not None
    assert json.loads(stats_json(fields, stats, tight_bounds=None)) == {
        "numRecords": 2,
        "minValues": {"col-a": 1, "col-s": {"col-x": 5}},
        "maxValues": {"col-a": 2, "col-s": {"col-x": 5}},
        "nullCount": {"col-a": 0, "col-s": {"col-x": 1}},
    }
    # a column selected by its logical name
    listed = indexed_fields(_mapped_schema(), [], {**config, STATS_COLUMNS: "s.x"})
    assert [(f.stored, [c.stored for c in f.children]) for f in listed] == [("col-s", ["col-x"])]


def test_id_mode_refuses_files_whose_field_ids_differ(tmp_path: Path) -> None:
    fields = indexed_fields(_mapped_schema(), [], {"delta.columnMapping.mode": "id"})
    assert [f.field_id for f in fields] == [1, 2]

    def write(name: str, a_id: int | None) -> Path:
        meta = None if a_id is None else {b"PARQUET:field_id": str(a_id).encode()}
        schema = pa.schema([pa.field("col-a", pa.int64(), metadata=meta)])
        path = tmp_path / name
        pq.write_table(pa.table({"col-a": [1]}, schema=schema), path)
        return path

    matching = file_stats(str(write("ok.parquet", 1)), fields[:1], string_prefix=32)
    assert matching is not None
    assert matching.leaves[("col-a",)].low == 1
    for name, a_id in (("other.parquet", 7), ("none.parquet", None)):
        with pytest.raises(StatsUnsupportedError, match="field id"):
            file_stats(str(write(name, a_id)), fields[:1], string_prefix=32)
    with pytest.raises(StatsUnsupportedError, match="physicalName"):
        indexed_fields(
            {"type": "struct", "fields": [{"name": "a", "type": "long", "metadata": {}}]},
            [],
            {"delta.columnMapping.mode": "name"},
        )


def test_a_staged_commit_is_what_log_cleanup_removes_when_left_behind() -> None:
    staged = classify(FileEntry(f"_delta_log/{staged_name(7)}", 10, 0, False))
    assert (staged.kind, staged.version) == (LogFileKind.STAGED, 7)
