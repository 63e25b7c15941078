"""OPTIMIZE: compaction and Z-order of a Delta table.

``plan`` decides what is worth rewriting, ``execute`` rewrites and commits it through delta-rs,
``zorder`` orders rows along a Z-order curve and commits one partition at a time.
"""

from python_ops.ops.optimize.execute import optimize
from python_ops.ops.optimize.plan import plan_optimize

__all__ = ["optimize", "plan_optimize"]
