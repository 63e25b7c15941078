"""Which engine a ``method: session`` profile target runs dbt on: a mode, named once.

``embedded`` starts Sail in-process and ``local`` a classic local Spark with the Delta jars, both
with tables under the target's ``warehouse`` (default ``./warehouse``); ``attach`` uses
``connect_url`` or the process's running Spark session, whose catalog places tables. The adapter
starts the engine; ``python -m python_ops maintain`` reads the same profile to find the tables.
"""

from __future__ import annotations

from enum import StrEnum

from python_ops.errors import ConfigError

MODES_HELP = (
    "embedded starts Sail in-process; local starts a classic local Spark with the Delta jars "
    "in-process; attach uses connect_url or the running Spark session"
)


class EngineMode(StrEnum):
    """A profile target's ``mode``."""

    EMBEDDED = "embedded"
    LOCAL = "local"
    ATTACH = "attach"

    @property
    def owns_warehouse(self) -> bool:
        """Whether the engine keeps its tables under a warehouse of its own (``./warehouse``)."""
        return self in (EngineMode.EMBEDDED, EngineMode.LOCAL)


def engine_mode(value: object) -> EngineMode:
    """The mode a profile names (None: ``embedded``, the default).

    Raises:
        ConfigError: For any other word, naming the modes and what each does.
    """
    if value is None:
        return EngineMode.EMBEDDED
    try:
        return EngineMode(str(value))
    except ValueError as err:
        raise ConfigError(
            setting="mode",
            value=value,
            fix=f"Use one of: {', '.join(EngineMode)} ({MODES_HELP}).",
        ) from err
