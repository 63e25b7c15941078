"""Expired log cleanup (docs/spec.md 2).

``rules`` (pure), ``options`` -> ``plan`` -> ``execute`` (with ``delete``), composed by
``run.cleanup_logs``.
"""

from python_ops.ops.log_cleanup.delete import remove_stale_staged
from python_ops.ops.log_cleanup.rules import (
    commit_timestamps,
    expiry_cutoff_ms,
    monotonic_times,
    resolve_log_retention,
    select_expired,
)
from python_ops.ops.log_cleanup.run import cleanup_logs

__all__ = [
    "cleanup_logs",
    "commit_timestamps",
    "expiry_cutoff_ms",
    "monotonic_times",
    "remove_stale_staged",
    "resolve_log_retention",
    "select_expired",
]
