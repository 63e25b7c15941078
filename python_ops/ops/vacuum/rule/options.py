"""VACUUM's options: one frozen value, its modes and sources as enums, checked once.

``vacuum`` (``run``) takes the options as keyword arguments, as the command line and the
adapter pass them, and turns them into ``VacuumOptions`` here: what it refuses before the table
is opened (``checked_options``) is refused before anything is read, as before the split.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from python_ops.errors import ConfigError
from python_ops.ops.audit import Audit
from python_ops.ops.vacuum_modes import VacuumEngine, VacuumMode
from python_ops.values import checked_number


class CandidateSource(StrEnum):
    """Where a run's candidates come from (``candidates``).

    LOG: the removes of the commits since the last vacuum (LITE); LISTING: a listing of the
    table's storage in this process (or the one a due check made); INVENTORY: an inventory
    report; EXECUTORS: a listing in Spark tasks (``cluster_listing``).
    """

    LOG = "log"
    LISTING = "listing"
    INVENTORY = "inventory"
    EXECUTORS = "executors"


@dataclass(frozen=True)
class VacuumOptions:
    """One VACUUM run's options, each as ``vacuum`` documents its argument of the same name.

    Attributes:
        retention_hours: Keep files newer than this; None: the table's retention.
        dry_run: Report only.
        partition_filter: SQL predicate on partition columns restricting the run.
        allow_short_retention: Allow a retention below the table's minimum.
        max_workers: Parallel deletion calls.
        now_ms: The current time in ms (None = now).
        progress_interval_s: Seconds between progress reports.
        cluster_listing: List and delete in Spark tasks where the storage allows it.
        engine: Where the selection runs.
        audit: Whether the run is audited, with the caller's labels (``ops.audit.Audit``).
        mode: FULL, LITE or AUTO.
        full_interval_days: AUTO: days between FULL runs.
        inventory: An inventory report used instead of a listing.
        keep_listing: Keep the listing this run makes in the plan (a due check's evidence,
            handed to the run it decides).
    """

    retention_hours: float | None = None
    dry_run: bool = True
    partition_filter: str | None = None
    allow_short_retention: bool = False
    max_workers: int = 8
    now_ms: int | None = None
    progress_interval_s: float = 5.0
    cluster_listing: bool = False
    engine: VacuumEngine = VacuumEngine.AUTO
    audit: Audit = field(default_factory=Audit)
    mode: VacuumMode = VacuumMode.FULL
    full_interval_days: float = 7.0
    inventory: str | None = None
    keep_listing: bool = False

    @property
    def selects_on_spark(self) -> bool:
        """Whether the selection runs on Spark: asked for, or ``auto`` with a cluster listing."""
        return self.engine is VacuumEngine.SPARK or (
            self.engine is VacuumEngine.AUTO and self.cluster_listing
        )


def _choice(enum: type[StrEnum], value: Any, setting: str) -> Any:
    try:
        return enum(value)
    except ValueError as err:
        fix = f"Choose one of: {', '.join(e.value for e in enum)}."
        raise ConfigError(setting=setting, value=value, fix=fix) from err


def checked_engine(engine: Any, *, spark: Any, cluster: bool) -> VacuumEngine:
    """The selection engine, refused before anything is read when it cannot run.

    Args:
        engine: ``auto``, ``in_process`` or ``spark``.
        spark: The Spark session, if any.
        cluster: Whether the listing is asked to run in Spark tasks (``cluster_listing``).

    Returns:
        The engine.

    Raises:
        ConfigError: For an unknown engine, or Spark asked for (or a cluster listing) without
            a session.
    """
    chosen: VacuumEngine = _choice(VacuumEngine, engine, "engine")
    on_spark = VacuumOptions(engine=chosen, cluster_listing=cluster).selects_on_spark
    if (on_spark or cluster) and spark is None:
        spark_asked = chosen is VacuumEngine.SPARK
        raise ConfigError(
            setting="engine" if spark_asked else "cluster_listing",
            value=engine if spark_asked else cluster,
            fix="It runs on a Spark session: pass spark=<session>, or use the in-process "
            "engine without cluster listing.",
        )
    return chosen


def checked_mode(mode: Any, *, inventory: str | None, cluster: bool) -> str:
    """The mode as given (FULL with an inventory), refusing what an inventory cannot run with.

    An unknown mode is refused later, by ``vacuum_mode``, as part of the run (its audit record).

    Args:
        mode: The mode asked for.
        inventory: The inventory report, if any.
        cluster: Whether the listing is asked to run in Spark tasks (``cluster_listing``).

    Returns:
        The mode the run has.

    Raises:
        ConfigError: For an inventory with LITE or a cluster listing.
    """
    if inventory is None:
        return str(mode)
    if mode == VacuumMode.LITE or cluster:
        raise ConfigError(
            setting="inventory",
            value=inventory,
            fix="an inventory replaces a FULL run's listing: not with mode lite or "
            "cluster_listing.",
        )
    return str(VacuumMode.FULL)


def vacuum_mode(mode: Any) -> VacuumMode:
    """``mode`` as a ``VacuumMode``.

    Raises:
        ConfigError: For an unknown mode, naming the valid ones.
    """
    chosen: VacuumMode = _choice(VacuumMode, mode, "mode")
    return chosen


def checked_workers(max_workers: Any) -> int:
    """Parallel deletion calls, at least one.

    Raises:
        ConfigError: For a count that is not a whole number of at least 1.
    """
    return int(checked_number(max_workers, setting="max_workers", minimum=1, whole=True))
