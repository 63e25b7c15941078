"""Statistics upkeep: fill in the file statistics data skipping needs, as Delta commits them.

In the VACUUM shape: ``run`` composes ``options`` (one frozen value) -> ``plan`` (which columns
need statistics and which files lack them) -> ``execute`` (``compute`` reads each due file's
footer, and its rows where the footer is not exact; ``stats_json`` spells the statistics as Delta
does; one ``COMPUTE STATS`` commit through the ``write`` collaborator) -> the frozen
``StatsResult``. ``compute_stats`` is imported on first use.
"""

from __future__ import annotations

from typing import Any

__all__ = ["compute_stats", "plan_stats"]


def __getattr__(name: str) -> Any:
    if name == "compute_stats":
        from python_ops.ops.stats.run import compute_stats

        return compute_stats
    if name == "plan_stats":
        from python_ops.ops.stats.plan import plan_stats

        return plan_stats
    raise AttributeError(name)
