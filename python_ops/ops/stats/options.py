"""What a statistics run is asked to do: one frozen value, checked once."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from python_ops.errors import ConfigError


@dataclass(frozen=True)
class StatsOptions:
    """A statistics request.

    Attributes:
        columns: Watched columns besides the table's indexed ones (the advisor's under
            ``maintenance_stats: auto``).
        dry_run: Plan only: count the files due, compute and write nothing.
        set_stats_columns: Set ``delta.dataSkippingStatsColumns`` when a watched column is not
            indexed (otherwise such a column is left unindexed).
    """

    columns: tuple[str, ...] = ()
    dry_run: bool = False
    set_stats_columns: bool = True


def stats_options(
    *, columns: Sequence[str], dry_run: bool, set_stats_columns: bool
) -> StatsOptions:
    """The options of one run, checked.

    Raises:
        ConfigError: ``columns`` is a bare string (a column name spelt as a sequence of
            letters) or holds something other than names.
    """
    if isinstance(columns, str):
        raise ConfigError(
            setting="columns",
            value=columns,
            fix=f"Give a list of column names, such as [{columns!r}].",
        )
    if not all(isinstance(c, str) and c for c in columns):
        raise ConfigError(
            setting="columns", value=list(columns), fix="Give non-empty column names."
        )
    return StatsOptions(tuple(columns), bool(dry_run), bool(set_stats_columns))
