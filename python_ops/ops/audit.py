"""Audit records: one structured record per op run, dry or not.

Until the dbt surface writes them to the ``maintenance_history`` table, records go to the
``python_ops.ops.audit`` logger as one JSON line each.
"""

from __future__ import annotations

import json
import logging
import time
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
