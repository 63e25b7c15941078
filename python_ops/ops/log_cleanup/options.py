"""What a log cleanup run is asked to do: one frozen value, checked once."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True)
class LogCleanupOptions:
    """A log cleanup request.

    Attributes:
        retention_days: Log retention; None uses ``delta.logRetentionDuration`` (default 30).
        dry_run: Report only (the default); False deletes.
        checkpoint_if_needed: Write a checkpoint first when expired commits lie after the
            newest checkpoint or ``_last_checkpoint`` is missing (not in dry runs).
        force: Clean even when the table sets ``delta.enableExpiredLogCleanup=false``.
        record_policy: Table properties to record first (from ``policy_properties``).
        now_ms: The run's current time in ms (the clock, read once).
    """

    now_ms: int
    retention_days: float | None = None
    dry_run: bool = True
    checkpoint_if_needed: bool = True
    force: bool = False
    record_policy: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
