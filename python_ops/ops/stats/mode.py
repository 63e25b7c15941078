"""``maintenance_stats``: whether statistics upkeep runs.

A module of its own: the config reads it without loading the op.
"""

from __future__ import annotations

from enum import StrEnum


class StatsMode(StrEnum):
    """``auto`` keeps file statistics for the watched columns; ``off`` leaves them alone."""

    AUTO = "auto"
    OFF = "off"
