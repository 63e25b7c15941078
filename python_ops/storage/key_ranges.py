"""Key ranges of one prefix, cut where known names fall, so one big prefix lists in parallel.

An object store lists a prefix in key order, 1,000 keys per request, each request waiting for
the previous one's continuation token: one unpartitioned table of 200,000 files is 200 requests
in a row. Started after different keys (``StartAfter``), ranges of the same prefix list at
once. Where to cut comes from names the caller already knows (VACUUM: the paths its log
protects; files nobody tracks are named like tracked ones, by the same writers): quantiles of
those names, so ranges hold about as many keys each.

Range ``i`` holds the keys after boundary ``i - 1`` up to and including boundary ``i``; the
first has no start, the last no end, so the ranges cover the key space once whatever the
boundaries are. Cutting needs enough known names: with fewer than ``MIN_PER_RANGE`` per range
the prefix lists as one range, as before.
"""

from __future__ import annotations

from typing import Any

MIN_PER_RANGE = 5_000  # known names per range: about 5 listing pages
_SAMPLE = 65_536  # names sorted to find the quantiles (a stride sample of bigger sets)

Bounds = tuple[str | None, str | None]  # (start after, last), relative paths; None: open


def split_points(hints: Any, rel: str, *, ranges: int, one_level: bool) -> list[str]:
    """Up to ``ranges - 1`` boundaries inside ``rel``: quantiles of the known names there.

    Args:
        hints: Known relative paths (an Arrow string array, or a list of str); names outside
            ``rel`` are ignored, repeats allowed.
        rel: The prefix (directory relative to the root, "" for the root).
        ranges: At most this many ranges.
        one_level: The prefix is listed one level deep (with ``/`` as delimiter): boundaries
            are then names directly in ``rel`` (a boundary inside a sub-prefix would report
            that sub-prefix in two ranges).

    Returns:
        Boundaries (relative paths below ``rel``), strictly increasing; empty when the prefix
        should be listed as one range.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    names = hints if isinstance(hints, pa.Array | pa.ChunkedArray) else pa.array(list(hints))
    names = names.cast(pa.string()).drop_null()
    base = f"{rel}/" if rel else ""
    if base:
        names = names.filter(pc.starts_with(names, base))
    if one_level:
        rest = pc.utf8_slice_codeunits(names, len(base)) if base else names
        names = names.filter(pc.invert(pc.match_substring(rest, "/")))
    if base:
        names = names.filter(pc.greater(pc.utf8_length(names), len(base)))
    count = min(max(1, ranges), len(names) // MIN_PER_RANGE)
    if count < 2:
        return []
    stride = max(1, len(names) // _SAMPLE)
    sample = names.take(pa.array(range(0, len(names), stride))) if stride > 1 else names
    ordered = pc.unique(sample)
    ordered = ordered.take(pc.sort_indices(ordered)).to_pylist()
    points = [ordered[(i * len(ordered)) // count] for i in range(1, count)]
    return sorted(set(points))


def key_ranges(points: list[str]) -> list[Bounds]:
    """The ranges the boundaries cut: ``[(None, p1), (p1, p2), ..., (pk, None)]``.

    Args:
        points: Strictly increasing boundaries (``split_points``).

    Returns:
        (start after, last) pairs covering the whole key space once.
    """
    starts: list[str | None] = [None, *points]
    ends: list[str | None] = [*points, None]
    return list(zip(starts, ends, strict=True))


def in_range(path: str, bounds: Bounds) -> bool:
    """Whether a path sorts after the range's start and not after its end."""
    start, last = bounds
    return (start is None or path > start) and (last is None or path <= last)
