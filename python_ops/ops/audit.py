"""Audit records: one structured record per op run, dry or not.

Every op run, also outside dbt, emits one JSON line at INFO on the ``python_ops.ops.audit``
logger; runs through the maintenance runner are recorded in the history table as well
(``python_ops.maintenance.records.history``). The command line does not print these lines
unless asked (``--verbose`` on stderr, ``--audit-log FILE`` as JSON lines; ``python_ops.cli.logs``).

An op knows tables, not who called it: the caller passes an ``Audit`` whose labels (the
maintenance layer's ``{"model": name}``) the op merges into its record.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("python_ops.ops.audit")


@dataclass(frozen=True)
class Audit:
    """Whether an op run is audited, and the caller's labels its record carries.

    Attributes:
        enabled: False records nothing (a due check's estimate is no run).
        labels: Fields the caller adds to the record (``{"model": "fct_orders"}``); the op's
            own fields win over a label of the same name.
    """

    enabled: bool = True
    labels: Mapping[str, str] = field(default_factory=dict)

    def record(
        self, op: str, location: str, status: str, details: dict[str, Any]
    ) -> dict[str, Any] | None:
        """``audit_record`` with the labels, when enabled.

        Args:
            op: The op name.
            location: The table location.
            status: ``succeeded`` or ``failed``.
            details: Parameters and counts of the run.

        Returns:
            The record emitted, or None when disabled.
        """
        if not self.enabled:
            return None
        return audit_record(op, location, status, {**self.labels, **details})


def as_audit(audit: Audit | bool) -> Audit:
    """An op's ``audit`` argument as an ``Audit`` (a bare bool: on or off, no labels).

    Args:
        audit: An ``Audit``, or True / False.

    Returns:
        The ``Audit``.
    """
    return audit if isinstance(audit, Audit) else Audit(enabled=bool(audit))


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
    op: str, location: str, params: dict[str, Any], *, audit: Audit | bool = True
) -> Iterator[dict[str, Any]]:
    """Record the run of the block: ``failed`` with ``params`` and the error, or ``succeeded``.

    Args:
        op: The op name.
        location: The table location.
        params: The run's parameters (recorded with a failure).
        audit: Whether to record and the caller's labels (False records nothing).

    Yields:
        The details recorded for a success: the block fills them in.
    """
    chosen = as_audit(audit)
    details: dict[str, Any] = {}
    try:
        yield details
    except Exception as err:
        chosen.record(op, location, "failed", {**params, "error": str(err)})
        raise
    chosen.record(op, location, "succeeded", details)
