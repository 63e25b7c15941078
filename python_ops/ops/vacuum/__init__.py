"""VACUUM, as its own wing (like ``ops/optimize``): options -> plan -> execute -> result.

- ``run``: the op (``vacuum``): composes the steps below and writes the audit record;
- ``options``: ``VacuumOptions`` and the enums of its mode, engine and candidate source;
- ``plan``: ``plan_vacuum``: the retention and cutoff, the mode, the candidates from one source
  and their selection, as a ``VacuumPlan`` nothing has run on;
- ``candidates``: the sources (the log, a listing or the due check's, an inventory, Spark
  tasks), one interface; memory handed over by ownership;
- ``execute``: deletes the plan's selection (``Deletion``), writes the state, the result;
- ``mode``: FULL, LITE or AUTO, and why (``choose_mode``), from ``state``;
- ``state``: ``_delta_log/_last_vacuum_info``, read and written as Delta 4.4 keeps it;
- ``lite``: LITE's candidates, the ``remove`` actions expired since the last vacuum, read
  from the log without listing the data directories;
- ``selection``: which listed (or logged) paths are deleted, in the process (Arrow) or on Spark;
- ``cluster``: selection and deletion on a Spark cluster's executors;
- ``kept``: directories the selection named that a writer filled meanwhile (kept, not errors).

The behaviour follows docs/spec.md section 1.
"""

from python_ops.ops.vacuum.plan import protected_paths
from python_ops.ops.vacuum.retention import vacuum_retention
from python_ops.ops.vacuum.run import vacuum

__all__ = ["protected_paths", "vacuum", "vacuum_retention"]
