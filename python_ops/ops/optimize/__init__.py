"""OPTIMIZE: compaction and Z-order of a Delta table.

``plan`` decides what is worth rewriting, ``execute`` has it rewritten and committed by Delta's
own SQL where the engine has Delta, else by delta-rs; ``zorder`` orders rows along a Z-order
curve and commits one partition at a time (the delta-rs route). ``optimize``
and ``plan_optimize`` are imported on first use, so reading ``plan``'s defaults (the CLI, the
config) does not load the rewrite machinery.
"""

from __future__ import annotations

from typing import Any

__all__ = ["optimize", "plan_optimize"]


def __getattr__(name: str) -> Any:
    if name == "optimize":
        from python_ops.ops.optimize.execute import optimize

        return optimize
    if name == "plan_optimize":
        from python_ops.ops.optimize.plan import plan_optimize

        return plan_optimize
    raise AttributeError(name)
