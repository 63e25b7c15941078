"""Audit records: one structured record per op run, dry or not.

Every op run, also outside dbt, emits one JSON line at INFO on the ``python_ops.ops.audit``
logger; runs through the maintenance runner are recorded in the history table as well
(``python_ops.maintenance.history``). The command line does not print these lines unless asked
(``--verbose`` on stderr, ``--audit-log FILE`` as JSON lines; ``python_ops.cli.logs``).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

log = logging.getLogger("python_ops.ops.audit")


def audit_record(op: str, location: str, status: str, details: dict[str, Any]) -> dict[str, Any]:
    """Build and emit the audit record of one op run.

    Args:
        op: The op name (``vacuum``, ``cleanup_logs``, ``optimize``).
        location: The table location.
        status: ``succeeded`` or ``failed``.
        details: Parameters and counts of the run (must be JSON-serialisable).

    Returns:
        The record that was emitted.
    """
    record = {
        "op": op,
        "location": location,
        "status": status,
        "recorded_at_ms": int(time.time() * 1000),
        **details,
    }
    log.info(json.dumps(record, sort_keys=True, default=str))
    return record


@contextmanager
def audited(
    op: str, location: str, params: dict[str, Any], *, enabled: bool = True
) -> Iterator[dict[str, Any]]:
    """Record the run of the block: ``failed`` with ``params`` and the error, or ``succeeded``.

    Args:
        op: The op name.
        location: The table location.
        params: The run's parameters (recorded with a failure).
        enabled: False records nothing.

    Yields:
        The details recorded for a success: the block fills them in.
    """
    details: dict[str, Any] = {}
    try:
        yield details
    except Exception as err:
        if enabled:
            audit_record(op, location, "failed", {**params, "error": str(err)})
        raise
    if enabled:
        audit_record(op, location, "succeeded", details)
