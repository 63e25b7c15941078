"""VACUUM, as its own wing (like ``ops/optimize``), each step a module.

- ``run``: the op (``vacuum``): the retention and the protected set, the mode, then select and
  delete; its result and audit record;
- ``mode``: FULL, LITE or AUTO, and why (``choose_mode``), from ``state``;
- ``state``: ``_delta_log/_last_vacuum_info``, read and written as Delta 4.4 keeps it;
- ``lite``: LITE's candidates, the ``remove`` actions expired since the last vacuum, read
  from the log without listing the data directories;
- ``selection``: which listed (or logged) paths are deleted, in the process (Arrow) or on Spark;
- ``cluster``: selection and deletion on a Spark cluster's executors;
- ``kept``: directories the selection named that a writer filled meanwhile (kept, not errors).

The behaviour follows docs/spec.md section 1.
"""

from python_ops.ops.vacuum.retention import vacuum_retention
from python_ops.ops.vacuum.run import protected_paths, vacuum

__all__ = ["protected_paths", "vacuum", "vacuum_retention"]
