"""Which VACUUM runs: FULL (lists storage), LITE (reads the log) or ``auto``, and why.

``auto`` runs LITE when it can be complete and a FULL run is recent, FULL otherwise:

- with a partition filter (LITE covers the whole table only);
- when the log no longer reaches back to where LITE must start (the log was cleaned and no
  ``_last_vacuum_info`` reaches its earliest commit): LITE would refuse;
- when no complete FULL run is recorded in ``_delta_log/_last_vacuum_info``, or the last one
  started ``full_interval_days`` or more ago: only FULL finds untracked files (files of jobs that
  failed before they committed), and the log's record travels with the table, whoever ran it.

After a real run that deleted everything it selected, ``next_state`` is what the state file
says next: the last commit whose removes are handled, and when the last FULL run started.
"""

from __future__ import annotations

from dataclasses import dataclass

from python_ops.delta.state.snapshot import Snapshot
from python_ops.errors import ConfigError
from python_ops.ops.vacuum.sources.lite import LiteVacuumUnavailableError, LiteWindow, lite_window
from python_ops.ops.vacuum.sources.state import (
    LAST_VACUUM_INFO,
    LastVacuumInfo,
    read_last_vacuum_info,
)
from python_ops.storage import Storage
from python_ops.values import checked_number

MODES = ("full", "lite", "auto")
DAY_MS = 86_400_000


@dataclass(frozen=True)
class ModeChoice:
    """The mode a VACUUM runs in.

    Attributes:
        mode: ``full`` or ``lite``.
        reason: Why, in words.
        window: The commits LITE reads (for FULL: where the next LITE may start).
        last: What ``_last_vacuum_info`` said before the run (None: absent).
    """

    mode: str
    reason: str
    window: LiteWindow
    last: LastVacuumInfo | None


def _unreachable(window: LiteWindow, last: LastVacuumInfo | None) -> str:
    reach = (
        f"{LAST_VACUUM_INFO} reaches only version {last.version}"
        if last is not None and last.version is not None
        else f"no {LAST_VACUUM_INFO} records a version"
    )
    return f"the log starts at version {window.earliest} and {reach}"


def choose_mode(
    storage: Storage,
    snapshot: Snapshot,
    *,
    mode: str,
    cutoff_ms: int,
    now_ms: int,
    partition_filter: str | None,
    full_interval_days: float,
) -> ModeChoice:
    """Decide the mode of one VACUUM run (before anything is listed or deleted).

    Args:
        storage: The table's storage.
        snapshot: The latest snapshot.
        mode: ``full``, ``lite`` or ``auto``.
        cutoff_ms: The run's cutoff.
        now_ms: The run's time.
        partition_filter: The run's partition filter, if any.
        full_interval_days: ``auto``: days between FULL runs (0: always FULL).

    Returns:
        The choice.

    Raises:
        ConfigError: For an unknown mode, a bad interval, or LITE with a partition filter.
        LiteVacuumUnavailableError: For ``lite`` when the log no longer reaches back to where
            it must start (and it has something to read).
    """
    if mode not in MODES:
        raise ConfigError(setting="mode", value=mode, fix=f"Choose one of: {', '.join(MODES)}.")
    interval = checked_number(full_interval_days, setting="full_interval_days")
    last = read_last_vacuum_info(storage)
    window = lite_window(storage, snapshot, cutoff_ms, last)
    if mode == "full":
        return ModeChoice("full", "FULL requested", window, last)
    if mode == "lite":
        _check_lite(storage, window, last, partition_filter=partition_filter)
        return ModeChoice("lite", "LITE requested", window, last)
    if partition_filter is not None:
        return ModeChoice(
            "full", "auto: a partition filter, LITE covers whole tables only", window, last
        )
    return _auto(window, last, now_ms=now_ms, interval=interval)


def _check_lite(
    storage: Storage,
    window: LiteWindow,
    last: LastVacuumInfo | None,
    *,
    partition_filter: str | None,
) -> None:
    """Refuse LITE with a partition filter, or where the log no longer reaches back."""
    if partition_filter is not None:
        raise ConfigError(
            setting="partition_filter",
            value=partition_filter,
            fix="LITE reads the whole table's log; leave out the partition filter, or run "
            "FULL (mode 'full') on the partitions.",
        )
    if window.end is not None and not window.complete:
        raise LiteVacuumUnavailableError(
            table=storage.root,
            earliest=window.earliest,
            last_version=last.version if last is not None else None,
        )


def _auto(
    window: LiteWindow, last: LastVacuumInfo | None, *, now_ms: int, interval: float
) -> ModeChoice:
    """AUTO on a whole table: LITE when it can be complete and the last FULL run is recent."""
    if not window.complete:
        why = f"auto: LITE cannot be complete: {_unreachable(window, last)}"
        return ModeChoice("full", why, window, last)
    started = last.full_vacuum_started_ms if last is not None else None
    if started is None:
        why = f"auto: no FULL run recorded in {LAST_VACUUM_INFO}; only FULL finds untracked files"
        return ModeChoice("full", why, window, last)
    age_days = (now_ms - started) / DAY_MS
    if age_days >= interval:
        why = f"auto: last FULL run {age_days:.1f} days ago, FULL every {interval:g} days"
        return ModeChoice("full", why, window, last)
    why = (
        f"auto: last FULL run {age_days:.1f} days ago, next FULL in {interval - age_days:.1f} days"
    )
    return ModeChoice("lite", why, window, last)


def next_state(choice: ModeChoice, *, now_ms: int) -> LastVacuumInfo | None:
    """What ``_last_vacuum_info`` says after a complete real run in ``choice``'s mode.

    LITE handled the removes of every commit up to the window's end. A whole-table FULL deleted
    everything LITE would have from those commits, so it records the same version (as Delta
    does once issue #4162 is fixed; Delta 4.4 writes none) and its start time; a position
    already further on (a run with a shorter retention) is kept.

    Args:
        choice: The run's mode choice.
        now_ms: The run's time (a FULL run's start).

    Returns:
        The new info; None when there is nothing new to record.
    """
    last = choice.last
    before = last.version if last is not None else None
    end = choice.window.end
    version = end if before is None else before if end is None else max(before, end)
    # the cutoff goes with the version only when this run moved it (else the old pair stays)
    moved = version == end
    cutoff = choice.window.cutoff_ms if moved else (last.cutoff_ms if last else None)
    if choice.mode == "full":
        return LastVacuumInfo(version, full_vacuum_started_ms=now_ms, mode="full", cutoff_ms=cutoff)
    if end is None:
        return None
    started = last.full_vacuum_started_ms if last is not None else None
    return LastVacuumInfo(version, full_vacuum_started_ms=started, mode="lite", cutoff_ms=cutoff)
