"""LITE's selection against protected paths given without their parent directories."""

from __future__ import annotations

import pyarrow as pa

from python_ops.ops.vacuum.lite import select_lite

OLD, CUTOFF = 1_000, 2_000


def test_a_candidate_that_is_a_parent_of_a_protected_path_is_kept() -> None:
    # an object store holds key "p=1/a" beside "p=1/a/live.parquet"; Delta keeps the key too
    protected = pa.array(["p=1/a/live.parquet", "p=2/kept.parquet", "é/x/y.parquet"])
    candidates = {
        "p=1/a": (10, OLD),
        "p=2/kept.parquet": (10, OLD),
        "p=2/gone.parquet": (10, OLD),
        "é/x": (10, OLD),
        "p=1/a/live": (10, OLD),  # a prefix of a name, not a directory above it
    }
    chosen = [f.path for f in select_lite(candidates, protected, CUTOFF)]
    assert chosen == ["p=1/a/live", "p=2/gone.parquet"]


def test_candidates_removed_after_the_cutoff_are_not_selected() -> None:
    chosen = select_lite({"new.parquet": (5, CUTOFF)}, pa.array([], pa.string()), CUTOFF)
    assert chosen == []
