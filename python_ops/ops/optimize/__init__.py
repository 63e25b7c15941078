"""OPTIMIZE: compaction and Z-order of a Delta table.

``planning.plan`` decides what is worth rewriting; ``execute`` (the package's front) has it
rewritten and committed by one of the ``writers``: Delta's own SQL where the engine has Delta,
else ours; ``sorting.zorder`` orders rows along a Z-order curve in bounded memory. Rooms, lowest
first: ``sorting``, ``planning``, ``writers`` (``tests/unit/test_layers.py`` holds the order).
``optimize`` and ``plan_optimize`` are imported on first use, so reading ``plan``'s defaults
(the CLI, the config) does not load the rewrite machinery.
"""

from __future__ import annotations

from typing import Any

__all__ = ["optimize", "plan_optimize"]


def __getattr__(name: str) -> Any:
    if name == "optimize":
        from python_ops.ops.optimize.execute import optimize

        return optimize
    if name == "plan_optimize":
        from python_ops.ops.optimize.planning.plan import plan_optimize

        return plan_optimize
    raise AttributeError(name)
