"""What each commit of an OPTIMIZE run did, summed into its result."""

from __future__ import annotations

from dataclasses import dataclass

from python_ops.delta.log.actions import AddFile
from python_ops.ops.optimize.planning.plan import PartitionPlan
from python_ops.ops.optimize.sorting.zorder import WrittenFile


@dataclass(frozen=True)
class Outcome:
    """What one commit of an OPTIMIZE did (ours, or Delta's own statement's).

    Attributes:
        version: The committed version (None: nothing was committed).
        files_added: Files the commit added.
        files_removed: Files it removed.
        bytes_added: Their bytes.
        bytes_removed: Their bytes.
        considered: Candidate files of its partitions (as Delta counts them).
        skipped: Candidates no bin took.
        partitions: Partitions it rewrote.
        retries: Versions concurrent appends took before it committed.
    """

    version: int | None
    files_added: int
    files_removed: int
    bytes_added: int
    bytes_removed: int
    considered: int
    skipped: int
    partitions: int
    retries: int = 0


def rewrite_outcome(
    partition: PartitionPlan,
    inputs: list[AddFile],
    written: list[WrittenFile],
    version: int,
    retried: int,
) -> Outcome:
    """What one committed rewrite did, counted from its inputs and the files it wrote."""
    return Outcome(
        version=version,
        files_added=len(written),
        files_removed=len(inputs),
        bytes_added=sum(f.size_bytes for f in written),
        bytes_removed=sum(f.size_bytes for f in inputs),
        # as Delta counts them: the partition's candidates, and those no bin took
        considered=partition.candidates,
        skipped=partition.candidates - len(inputs),
        partitions=1,
        retries=retried,
    )
