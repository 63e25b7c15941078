"""The checkpoint path columns VACUUM reads (``file_columns.checkpoint_columns``).

The column-wise read must key every row as the row parser would (``relativize``), whichever
way it finds the paths that need normalising: the byte scan that skips the per-row regex must
never miss one, and a false alarm must still come out right.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from python_ops.delta.log.actions import relativize
from python_ops.delta.state.file_columns import checkpoint_columns

ROOT = "/data/warehouse/t"
PLAIN = [f"p={i % 3}/part-{i:05d}.parquet" for i in range(50)]
SPECIAL = [
    "p=1/a%20b.parquet",  # encoded
    "file:/data/warehouse/t/p=1/abs.parquet",  # absolute URI
    "/data/warehouse/t/p=2/abs2.parquet",  # absolute path
    "p=1//double.parquet",
    "p=1/./dot.parquet",
    "./lead.parquet",
    "p=0/x:y.parquet",
]


def _adds(paths: list[str], *, offset: int = 0) -> pa.Table:
    """An ``add`` struct column as a checkpoint holds it, ``offset`` rows sliced off its front."""
    rows = [
        {"path": p, "size": 10, "modificationTime": 1, "deletionVector": None}
        for p in ["skipped/x.parquet"] * offset + paths
    ]
    dv = pa.struct([("storageType", pa.string())])
    kind = pa.struct(
        [
            ("path", pa.string()),
            ("size", pa.int64()),
            ("modificationTime", pa.int64()),
            ("deletionVector", dv),
        ]
    )
    return pa.table({"add": pa.array(rows, kind).slice(offset)})


@pytest.mark.parametrize("special", [None, *SPECIAL])
@pytest.mark.parametrize("offset", [0, 7])
def test_live_paths_are_keyed_as_the_row_parser_keys_them(special: str | None, offset: int) -> None:
    paths = PLAIN[:20] + ([special] if special else []) + PLAIN[20:]
    found = checkpoint_columns(_adds(paths, offset=offset), ROOT)
    assert found is not None
    assert found.live.to_pylist() == [relativize(p, ROOT) for p in paths]


def test_two_paths_meeting_in_the_bytes_are_a_false_alarm_only() -> None:
    # "a/" then "/b" read "a//b" across the boundary: the regex then finds nothing to change
    paths = ["p=1/dir/", "/data/warehouse/t/p=1/b.parquet", "p=2/c.parquet"]
    found = checkpoint_columns(_adds(paths), ROOT)
    assert found is not None
    assert found.live.to_pylist() == [relativize(p, ROOT) for p in paths]


def test_a_path_outside_the_root_goes_to_the_row_parser() -> None:
    assert checkpoint_columns(_adds([*PLAIN, "file:/elsewhere/x.parquet"]), ROOT) is None


def test_a_deletion_vector_goes_to_the_row_parser() -> None:
    table = _adds(PLAIN[:3])
    rows = table.column("add").to_pylist()
    rows[1]["deletionVector"] = {"storageType": "u"}
    with_dv = pa.table({"add": pa.array(rows, table.schema.field("add").type)})
    assert checkpoint_columns(with_dv, ROOT) is None
