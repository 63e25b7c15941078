"""Where a VACUUM's candidates come from, and the selection made from them.

Each source (``CandidateSource``) is one function of one shape, ``CandidateReader``: it takes
the run's ``Scope`` and returns what it ``Found``: the selected paths and what was listed.

- ``LOG`` (LITE): the removes of the commits since the last vacuum; nothing is listed;
- ``LISTING``: the table's storage listed in this process, or the listing the due check made
  for this run (``ListingEvidence``: handed over explicitly, used once, for the same snapshot
  version and partition filter only);
- ``INVENTORY``: an inventory report stands in for the listing;
- ``EXECUTORS``: the listing (and, on Spark, the selection) in Spark tasks.

Memory is handed over by ownership: the scope owns the log's paths and gives them up when the
protected set is built; the listing and the protected set are held in ``Owned`` boxes that the
selection empties, so each is freed as soon as the step that needs it last is done (the listing
and the protected set before the selection becomes objects).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from python_ops.delta.state.file_paths import FilePaths
from python_ops.delta.state.snapshot import Snapshot
from python_ops.ops.lean_arrow import release_freed_memory
from python_ops.ops.results import VacuumDiagnostics, VacuumFile
from python_ops.ops.vacuum.executors.cluster import select_on_cluster
from python_ops.ops.vacuum.rule.options import CandidateSource, VacuumOptions
from python_ops.ops.vacuum.rule.selection import SelectedPaths, select_on_spark, selected_rows
from python_ops.ops.vacuum.sources.file_stats import stat_unprotected
from python_ops.ops.vacuum.sources.inventory import inventory_entries
from python_ops.ops.vacuum.sources.listing import Listing, list_visible
from python_ops.ops.vacuum.sources.lite import LiteWindow, lite_candidates, lite_selection
from python_ops.storage import Storage

T = TypeVar("T")
ListingKey = tuple[str, int, str | None]  # (table root, snapshot version, partition filter)

# Freed pages are handed back between phases only after this many entries: on a small table
# there is little to hand back, and ``malloc_trim`` walks the whole heap of a host process
# (about 4 ms in a 300 MB one), which a post-hook's due check on every model must not pay.
HAND_BACK_FROM_ENTRIES = 50_000


def hand_back(entries: int) -> None:
    """Hand freed pages back to the system after a phase that held ``entries`` entries."""
    if entries >= HAND_BACK_FROM_ENTRIES:
        release_freed_memory()


class Owned(Generic[T]):
    """One large value with one owner: whoever takes it holds the only reference.

    Args:
        value: The value, given up by the caller.
    """

    def __init__(self, value: T) -> None:
        self._value: T | None = value

    def peek(self) -> T:
        """The value, still owned here (for a look that keeps no reference)."""
        if self._value is None:
            raise RuntimeError("the value was given up already")
        return self._value

    def take(self) -> T:
        """The value, given up: this box no longer refers to it."""
        value = self.peek()
        self._value = None
        return value


@dataclass(frozen=True)
class KeptListing:
    """A listing as an Arrow table, with its counts.

    Attributes:
        entries: The listing (``Listing.table()``).
        files_listed: Files it listed.
        symlinks_skipped: Symbolic links it skipped.
        spellings_kept: Entries left out because their path is not canonical.
    """

    entries: Any
    files_listed: int
    symlinks_skipped: int
    spellings_kept: int = 0


class ListingEvidence:
    """A due check's listing, handed to the run it decided: used once, for its own key.

    Made against a snapshot version and partition filter: a run on another version (a commit
    in between) lists again. A file written after the listing is younger than any retention,
    so it is never a candidate anyway.

    Args:
        key: (table root, snapshot version, partition filter) the listing was made for.
        listing: The listing.
    """

    def __init__(self, key: ListingKey, listing: KeptListing) -> None:
        self.key = key
        self._listing: KeptListing | None = listing

    def take(self, key: ListingKey) -> KeptListing | None:
        """The listing for a run on ``key``, given up (each serves one run); else None."""
        if key != self.key:
            return None
        listing, self._listing = self._listing, None
        return listing


@dataclass
class Scope:
    """What a candidate source reads: the run's table, cutoff and roots; owns the log's paths.

    Attributes:
        storage: The table's storage.
        head: The snapshot (version, metadata).
        paths: The log's paths, given up by ``protected`` (or by LITE's check).
        cutoff_ms: The run's cutoff.
        roots: Directories to list (the partition filter's, or the root).
        window: The commits LITE reads.
        options: The run's options.
        spark: A Spark session, or None.
        evidence: The due check's listing, if it made one.
    """

    storage: Storage
    head: Snapshot
    paths: Owned[FilePaths]
    cutoff_ms: int
    roots: list[str]
    window: LiteWindow
    options: VacuumOptions
    spark: Any = None
    evidence: ListingEvidence | None = None

    @property
    def key(self) -> ListingKey:
        """This run's listing key."""
        return (self.storage.root, self.head.version, self.options.partition_filter)

    def protected(self) -> Any:
        """The protected set (Arrow), the log's paths given up for it."""
        return self.paths.take().protected(self.cutoff_ms)


@dataclass(frozen=True)
class Found:
    """What a source found.

    Attributes:
        selected: The selected paths.
        files_listed: Files listed (0 for LOG).
        symlinks_skipped: Symbolic links left alone.
        diagnostics: Where Spark tasks ran (EXECUTORS only).
        listing: The listing made, kept for the run a due check decides (``keep_listing``).
        spellings_kept: Listed or reported paths left out because they are not canonical
            (``storage.paths``): never deleted under another name.
    """

    selected: Sequence[VacuumFile]
    files_listed: int = 0
    symlinks_skipped: int = 0
    diagnostics: VacuumDiagnostics | None = None
    listing: ListingEvidence | None = None
    spellings_kept: int = 0


CandidateReader = Callable[[Scope], Found]


def from_log(scope: Scope) -> Found:
    """LITE: the expired removes since the last vacuum still unreferenced; nothing listed."""
    candidates = lite_candidates(scope.storage, scope.window, scope.head.location)
    # a few candidates checked against the log's paths (no protected set is built), and
    # against links on the way (the log names files, not what the disk holds now)
    selected, linked = lite_selection(
        scope.storage, candidates, scope.paths.take(), scope.cutoff_ms
    )
    return Found(selected, symlinks_skipped=linked)


def on_executors(scope: Scope) -> Found:
    """The listing (and on Spark the selection) in Spark tasks: the paths come to the driver."""
    found = select_on_cluster(
        scope.spark,
        scope.storage,
        partition_columns=scope.head.metadata.partition_columns,
        roots=scope.roots,
        protected=scope.protected(),
        cutoff_ms=scope.cutoff_ms,
        on_spark=scope.options.selects_on_spark,
    )
    return Found(found.selected, found.files_listed, found.symlinks_skipped, found.diagnostics)


def from_listing(scope: Scope) -> Found:
    """A listing of the table's storage (the due check's, if it is for this run), selected."""
    protected = Owned(scope.protected())
    listing, fresh = _listing_for(scope, protected.peek())
    counts = listing.peek().files_listed, listing.peek().symlinks_skipped
    spellings = listing.peek().spellings_kept
    evidence = (
        ListingEvidence(scope.key, listing.peek()) if fresh and scope.options.keep_listing else None
    )
    return Found(
        _select(scope, listing, protected), *counts, listing=evidence, spellings_kept=spellings
    )


def from_inventory(scope: Scope) -> Found:
    """An inventory report stands in for the listing (Delta's ``VACUUM ... USING INVENTORY``)."""
    protected = Owned(scope.protected())
    report = inventory_entries(
        str(scope.options.inventory),
        root=scope.storage.root,
        partition_columns=scope.head.metadata.partition_columns,
        roots=scope.roots,
        linked=scope.storage.behind_links,
        cutoff_ms=scope.cutoff_ms,
    )
    listing = Owned(
        KeptListing(report.table, report.taken, report.links_kept, report.spellings_kept)
    )
    del report  # the listing box owns the table now
    counts = listing.peek().files_listed, listing.peek().symlinks_skipped
    spellings = listing.peek().spellings_kept
    return Found(_select(scope, listing, protected), *counts, spellings_kept=spellings)


READERS: dict[CandidateSource, CandidateReader] = {
    CandidateSource.LOG: from_log,
    CandidateSource.LISTING: from_listing,
    CandidateSource.INVENTORY: from_inventory,
    CandidateSource.EXECUTORS: on_executors,
}


def _listing_for(scope: Scope, protected: Any) -> tuple[Owned[KeptListing], bool]:
    """The due check's listing for this run, else a fresh one; and whether it is fresh."""
    handed = scope.evidence.take(scope.key) if scope.evidence is not None else None
    if handed is None:
        return Owned(_listed(scope, protected)), True
    if scope.storage.names_before_stats:
        # listed against the due check's protected set: stat what this run's no longer
        # protects (a tombstone expired in between)
        entries, links = stat_unprotected(scope.storage, handed.entries, protected)
        return Owned(
            KeptListing(
                entries,
                handed.files_listed,
                handed.symlinks_skipped + links,
                handed.spellings_kept,
            )
        ), False
    return Owned(handed), False


def _listed(scope: Scope, protected: Any) -> KeptListing:
    """The table's storage listed in this process, as an Arrow table (the batches freed)."""
    kept = _list(scope, protected)
    hand_back(kept.files_listed)
    return kept


def _list(scope: Scope, protected: Any) -> KeptListing:
    if not scope.roots:  # a partition filter that matches nothing
        listing = Listing((), 0, 0)
    else:
        listing = list_visible(
            scope.storage,
            partition_columns=scope.head.metadata.partition_columns,
            roots=scope.roots,
            max_workers=scope.storage.listing_concurrency,
            split_hints=protected,  # where to cut one big prefix into key ranges
            protected=protected,  # a protected file needs no stat (local disks)
        )
    return KeptListing(
        listing.table(), listing.files_listed, listing.symlinks_skipped, listing.spellings_kept
    )


def _select(
    scope: Scope, listing: Owned[KeptListing], protected: Owned[Any]
) -> Sequence[VacuumFile]:
    """The selection from a listing: both boxes emptied, their contents freed on the way."""
    if scope.options.selects_on_spark:
        return select_on_spark(
            scope.spark, listing.take().entries, protected.take(), scope.cutoff_ms
        )
    return SelectedPaths(_rows(listing, protected, scope.cutoff_ms), ordered=True)


def _rows(listing: Owned[KeptListing], protected: Owned[Any], cutoff_ms: int) -> Any:
    """The selected rows; the protected set is gone before they become objects."""
    entries = listing.take().entries
    rows = selected_rows(entries, protected.take(), cutoff_ms)  # frees the protected set
    hand_back(entries.num_rows)
    return rows
