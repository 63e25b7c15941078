"""VACUUM's two modes, named once: where its selection runs, and how it finds candidates.

``VacuumEngine``: ``auto`` selects in this process (Arrow) unless the work needs Spark (listing
on a cluster); ``in_process`` always in this process; ``spark`` on the Spark session the caller
gives (a cluster the user attached to). ``VacuumMode``: ``full`` lists the table, ``lite``
reads the log's removes only, ``auto`` is LITE unless it cannot be complete (and FULL every
``full_interval_days``).

Both are ``StrEnum``s: each member is also its word, so a config, a CLI flag or an op that still
compares with the word reads it alike.
"""

from __future__ import annotations

from enum import StrEnum


class VacuumEngine(StrEnum):
    """Where VACUUM's file selection runs (``vacuum``'s ``engine``)."""

    AUTO = "auto"
    IN_PROCESS = "in_process"
    SPARK = "spark"


class VacuumMode(StrEnum):
    """How VACUUM finds what to delete (``maintenance_vacuum_mode``, ``vacuum``'s ``mode``)."""

    AUTO = "auto"
    FULL = "full"
    LITE = "lite"
