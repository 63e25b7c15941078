"""VACUUM, as its own wing (like ``ops/optimize``): options -> plan -> execute -> result.

The package's own modules are the op's front, each step one module:

- ``run``: the op (``vacuum``): composes the steps below and writes the audit record;
- ``plan``: ``plan_vacuum``: the retention and cutoff, the mode, the candidates from one source
  and their selection, as a ``VacuumPlan`` nothing has run on;
- ``candidates``: the sources (the log, a listing or the due check's, an inventory, Spark
  tasks), one interface; memory handed over by ownership;
- ``execute``: deletes the plan's selection (``Deletion``), writes the state, the result.

Below them four rooms, lowest first (``tests/unit/test_layers.py`` holds the order): ``rule``
(options, retention, the selection program), ``sources`` (listing, inventory, LITE and its
state, the mode), ``deleting`` (files, then directories) and ``executors`` (the same on a Spark
cluster's executors).

The behaviour follows docs/spec.md section 1.
"""

from python_ops.ops.vacuum.plan import protected_paths
from python_ops.ops.vacuum.rule.retention import vacuum_retention
from python_ops.ops.vacuum.run import vacuum

__all__ = ["protected_paths", "vacuum", "vacuum_retention"]
