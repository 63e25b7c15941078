"""Statistics upkeep: fill in the file statistics data skipping needs, as Delta commits them.

``plan`` decides which columns need statistics and which files lack them, ``compute`` reads
each such file's footer (and its rows where the footer is not exact), ``stats_json`` spells the
statistics as Delta does, ``commit`` writes the one ``COMPUTE STATS`` commit. ``compute_stats``
is imported on first use.
"""

from __future__ import annotations

from typing import Any

__all__ = ["compute_stats", "plan_stats"]


def __getattr__(name: str) -> Any:
    if name == "compute_stats":
        from python_ops.ops.stats.execute import compute_stats

        return compute_stats
    if name == "plan_stats":
        from python_ops.ops.stats.plan import plan_stats

        return plan_stats
    raise AttributeError(name)
