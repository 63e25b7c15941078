"""The CLI's Arrow tuning; it lives in ``python_ops.ops.lean_arrow`` (the runner uses it too)."""

from python_ops.ops.lean_arrow import block_numpy_for_process, lean_arrow, pandas_blocked

__all__ = ["block_numpy_for_process", "lean_arrow", "pandas_blocked"]
