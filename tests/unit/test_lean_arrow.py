"""The engine-free ops' Arrow tuning: what it blocks, and that it leaves the process whole after."""

from __future__ import annotations

import pytest

from python_ops.__main__ import engine_free_vacuum, lite_only
from tests.helpers.python_run import python_stdout


def test_pandas_used_after_a_blocked_op_converts_as_without_the_block() -> None:
    out = python_stdout(
        """
        import pyarrow as pa
        from python_ops.ops.lean_arrow import lean_arrow
        with lean_arrow():
            pa.array(["a"])  # pyarrow's shim asks for pandas here: refused
        import pandas as pd
        # without the heal, pyarrow would take the Series for a plain sequence and fail on <NA>
        print(pa.array(pd.Series([1, None], dtype="Int64")).type)
        print(pa.lib._pandas_api.is_data_frame(pd.DataFrame({"a": [1]})))
        """
    )
    assert out.splitlines() == ["int64", "True"]


def test_the_block_refuses_pandas_inside_only_and_restores_the_pool() -> None:
    out = python_stdout(
        """
        import sys
        import pyarrow as pa
        from python_ops.ops.lean_arrow import lean_arrow
        before = pa.default_memory_pool().backend_name
        with lean_arrow():
            inside = pa.default_memory_pool().backend_name
            with lean_arrow():  # nested (the runner's op inside its model): still system
                nested = pa.default_memory_pool().backend_name
            try:
                import pandas
                print("imported")
            except ImportError:
                print("refused")
        print(before, inside, nested, pa.default_memory_pool().backend_name)
        import pandas
        print("pandas" in sys.modules)
        """
    )
    refused, pools, imported = out.splitlines()
    assert refused == "refused"
    before, inside, nested, after = pools.split()
    assert (inside, nested) == ("system", "system")
    assert after == before
    assert imported == "True"


def test_a_process_with_numpy_blocked_runs_arrow_without_it() -> None:
    out = python_stdout(
        """
        import sys
        from python_ops.ops.lean_arrow import block_numpy_for_process
        print(block_numpy_for_process())
        import pyarrow as pa, pyarrow.compute as pc
        print(pc.sum(pa.array([1, 2])).as_py(), "numpy" in sys.modules)
        print(block_numpy_for_process())  # too late now: pyarrow is loaded
        """
    )
    assert out.splitlines() == ["True", "3 False", "False"]


@pytest.mark.parametrize(
    ("argv", "free"),
    [
        (["vacuum", "t", "--dry-run"], True),
        (["--engine", "in-process", "vacuum", "t"], True),
        (["--engine=in-process", "vacuum", "t", "--mode", "lite"], True),
        (["--engine", "embedded", "vacuum", "t"], False),
        (["--engine=classic", "vacuum", "t"], False),
        (["vacuum", "t", "--cluster-listing"], False),
        (["vacuum", "t", "--inventory", "inv.parquet"], False),
        (["vacuum", "t", "--inventory=inv.parquet"], False),
        (["optimize", "t"], False),
        (["--verbose", "vacuum", "t"], False),
        ([], False),
    ],
)
def test_only_an_engine_free_vacuum_blocks_numpy(argv: list[str], free: bool) -> None:
    assert engine_free_vacuum(argv) is free


@pytest.mark.parametrize(
    ("argv", "lite"),
    [
        (["vacuum", "t", "--mode", "lite"], True),
        (["vacuum", "--mode=lite", "t"], True),
        (["vacuum", "t", "--mode", "full"], False),
        (["vacuum", "t", "--mode", "auto"], False),
        (["vacuum", "lite"], False),  # a table named lite
    ],
)
def test_only_a_lite_vacuum_keeps_glibcs_mmap_threshold(argv: list[str], lite: bool) -> None:
    assert lite_only(argv) is lite
