"""Where VACUUM's selection runs: a mode, named once.

``auto`` selects in this process (Arrow) unless the work needs Spark (listing on a cluster);
``in_process`` always in this process; ``spark`` on the Spark session the caller gives (a cluster
the user attached to). A ``StrEnum``: each member is also its word, so an op that still compares
with the word reads it alike.
"""

from __future__ import annotations

from enum import StrEnum


class VacuumEngine(StrEnum):
    """Where VACUUM's file selection runs (``vacuum``'s ``engine``)."""

    AUTO = "auto"
    IN_PROCESS = "in_process"
    SPARK = "spark"
