"""VACUUM's path-only log read (``read_file_paths``) against the object reader, on real tables.

The columnar read must protect exactly what the row-by-row snapshot protects, on every fixture
table, including after later commits reconcile checkpoint rows; the streamed JSON of a result is
the same document as ``json.dumps(result.to_dict())``.
"""

from __future__ import annotations

import io
import json

import pytest

from python_ops.delta.state.file_paths import read_file_paths
from python_ops.delta.state.snapshot import Snapshot, read_snapshot
from python_ops.ops.results import VacuumFile, VacuumGroup, VacuumResult
from tests.helpers.paths import delta_table_names
from tests.helpers.trust import append_commit

FUTURE = 4_000_000_000_000  # every tombstone is expired
PAST = 0  # every tombstone is protected


def _reference(snapshot: Snapshot, cutoff_ms: int) -> set[str]:
    """The protected set computed object by object, as docs/spec.md section 1 states it."""
    keep: set[str] = set()
    actions = [*snapshot.files]
    actions += [t for t in snapshot.tombstones if t.deletion_timestamp_ms >= cutoff_ms]
    for action in actions:
        dv = action.deletion_vector
        for path in (action.relative_path, dv.file_path(snapshot.location) if dv else None):
            if path is not None:
                parts = path.split("/")
                keep.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    return keep


@pytest.mark.parametrize("name", delta_table_names())
def test_columnar_read_protects_what_the_snapshot_protects(fixture_table, name: str) -> None:
    table = fixture_table(name)
    snapshot = read_snapshot(str(table))
    paths = read_file_paths(str(table))
    assert paths.head.version == snapshot.version
    assert paths.head.protocol == snapshot.protocol
    assert paths.head.metadata == snapshot.metadata
    names = [*sorted(_reference(snapshot, PAST)), "not/a/file.parquet", "x", "x.parquet"]
    for cutoff in (PAST, FUTURE):
        assert set(paths.protected(cutoff).to_pylist()) == _reference(snapshot, cutoff)
        # LITE's check of a few names says the same of each
        assert paths.kept_among(names, cutoff) == set(names) & _reference(snapshot, cutoff)


def test_checkpoint_rows_stay_columns_and_later_commits_reconcile_them(fixture_table) -> None:
    table = fixture_table("simple_table_with_checkpoint")
    before = read_file_paths(str(table))
    live = before.columns[0].live.to_pylist()
    assert live, "the checkpoint has add rows"
    gone, kept = live[0], live[1:]
    append_commit(table, {"remove": {"path": gone, "deletionTimestamp": 1, "dataChange": True}})
    after = read_file_paths(str(table))
    assert gone in after.reconciled  # the checkpoint's row of it no longer counts
    assert [t.relative_path for t in after.head.tombstones if t.relative_path == gone] == [gone]
    assert gone not in after.protected(FUTURE).to_pylist()  # its tombstone has expired
    assert gone in after.protected(PAST).to_pylist()
    assert after.kept_among([gone, *kept], FUTURE) == set(kept)
    assert after.kept_among([gone], PAST) == {gone}
    assert set(kept) <= set(after.protected(FUTURE).to_pylist())
    assert set(after.protected(FUTURE).to_pylist()) == _reference(read_snapshot(str(table)), FUTURE)


def test_a_malformed_checkpoint_row_is_parsed_row_by_row(fixture_table) -> None:
    """A negative size is not taken column-wise: the row parser judges it (and refuses it)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from python_ops.errors import DeltaLogError

    table = fixture_table("simple_table_with_checkpoint")
    assert read_file_paths(str(table)).columns, "the checkpoint is read as columns"
    checkpoint = sorted((table / "_delta_log").glob("*.checkpoint.parquet"))[-1]
    data = pq.read_table(checkpoint)
    add = data.column("add").combine_chunks()
    fields = [add.field(i) for i in range(add.type.num_fields)]
    names_ = [add.type.field(i).name for i in range(add.type.num_fields)]
    size = fields[names_.index("size")]
    first = pc.indices_nonzero(add.is_valid())[0].as_py()
    negative = pc.replace_with_mask(
        size, pa.array([i == first for i in range(len(size))]), pa.array([-5], size.type)
    )
    fields[names_.index("size")] = negative
    rebuilt = pa.StructArray.from_arrays(fields, names=names_, mask=pc.invert(add.is_valid()))
    pq.write_table(data.set_column(data.schema.get_field_index("add"), "add", rebuilt), checkpoint)
    with pytest.raises(DeltaLogError, match="size"):
        read_file_paths(str(table))


def test_result_json_streams_the_same_document() -> None:
    paths = tuple(VacuumFile(f"p={i % 3}/part-{i}.parquet", i, False) for i in range(25))
    result = VacuumResult(
        location="/t",
        dry_run=True,
        table_version=3,
        retention_hours=168.0,
        retention_source="table",
        retention_check_overridden=False,
        cutoff_ms=1,
        partition_filter=None,
        partitions_scanned=None,
        files_listed=40,
        symlinks_skipped=0,
        spellings_kept=0,
        files_found=25,
        bytes_found=300,
        dirs_found=0,
        files_deleted=0,
        bytes_deleted=0,
        dirs_deleted=0,
        delete_failures=0,
        identify_s=0.5,
        delete_s=0.0,
        paths=paths,
        by_prefix=(VacuumGroup("p=0", 9, 108, 0),),
    )
    for chunk in (1, 7, 25, 100):
        out = io.StringIO()
        result.write_json(out, chunk=chunk)
        assert json.loads(out.getvalue()) == json.loads(json.dumps(result.to_dict()))
    empty = io.StringIO()
    result_without = VacuumResult(**{**result.to_dict(), "paths": (), "by_prefix": ()})
    result_without.write_json(empty)
    assert json.loads(empty.getvalue())["paths"] == []
