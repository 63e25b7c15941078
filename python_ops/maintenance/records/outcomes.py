"""The vocabulary of what maintenance did: statuses, reasons and the counters, declared once.

``OpCounts`` is what an op run did (files and bytes removed and added, versions); the runner's
``OpOutcome`` carries one, the history's ``HistoryRecord`` stores its columns, and reports and
dbt's output read them from there.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Status(StrEnum):
    """What happened to one op of one model."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    NOT_DUE = "not_due"  # not run: see the reason
    SKIPPED = "skipped"  # not started: the run's time budget was used up
    DEFERRED = "deferred"  # not run: it needs a JVM a post-hook may not start; still due


class Reason(StrEnum):
    """Why an op ran or did not; the outcome's ``detail`` says it in words."""

    DUE = "due"  # the table needs it
    REQUESTED = "requested"  # asked for by a run-operation or the CLI, due or not
    NOT_DUE = "not_due"  # the table does not need it
    DISABLED = "disabled"  # switched off by the model's config
    TOO_SOON = "too_soon"  # its minimum interval since the last run has not passed
    TIME_BUDGET = "time_budget"  # the run's time budget was used up
    NEEDS_JVM = "needs_jvm"  # Delta's own writer would start a JVM where none may start
    ERROR = "error"  # deciding or running it failed


@dataclass(frozen=True)
class OpCounts:
    """What an op did, in the vocabulary of history and reports.

    Attributes:
        files_removed: Files deleted or removed from the table (or that would be, dry run).
        bytes_removed: Their bytes.
        files_added: Files written.
        bytes_added: Their bytes.
        version_before: The table version the op started from.
        version_after: The table version after it (None when it did not read one).
        parameters: The settings it ran with, for the history.
        note: How it ran, when that matters to people (VACUUM's mode and why, directories it
            kept); shown after what it did.
        clustering: OPTIMIZE with ``auto`` clustering: the history's clustering columns
            (``clustering_columns``, ``clustering_evidence``, ``files_per_lookup_before``,
            ``files_per_lookup_after``); empty otherwise.
    """

    files_removed: int = 0
    bytes_removed: int = 0
    files_added: int = 0
    bytes_added: int = 0
    version_before: int | None = None
    version_after: int | None = None
    parameters: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    clustering: dict[str, str | None] = field(default_factory=dict)

    def columns(self) -> dict[str, Any]:
        """The counters as the history's columns (``HistoryRecord``) and the outcome's dict."""
        return {
            "files_removed": self.files_removed,
            "bytes_removed": self.bytes_removed,
            "files_added": self.files_added,
            "bytes_added": self.bytes_added,
            "version_before": self.version_before,
            "version_after": self.version_after,
            **self.clustering,
        }

    def changed(self) -> bool:
        """Whether the run changed the table: a commit, or files deleted or written.

        A VACUUM or log cleanup deletes without a commit; OPTIMIZE, a purge and statistics
        upkeep commit. (For a dry run, the counts say what would be: not a change.)
        """
        return bool(
            self.files_removed
            or self.files_added
            or self.bytes_removed
            or self.bytes_added
            or self.version_after != self.version_before
        )

    def failed(self) -> OpCounts:
        """The counts of a run that failed: what it did before, no version after, no note."""
        return dataclasses.replace(self, version_after=None, note="")


# What an op that did not run did: nothing. One instance for every such outcome (a post-hook
# makes one per op and model); frozen, and its dicts are never written to.
NOTHING_DONE = OpCounts()
