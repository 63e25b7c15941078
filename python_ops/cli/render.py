"""What the path commands print for people (``--json`` prints the results themselves).

Sizes are scaled by the helper the maintenance tables use too
(``python_ops.maintenance.rules.wording``: B, KB, MB, GB); a dry run says what it *would* do and
ends with a line saying that nothing was changed. ``maintain`` prints the runner's per-model table,
the same as ``maintain_all``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from python_ops.maintenance.rules.wording import files_text as files
from python_ops.maintenance.rules.wording import size_text as format_bytes
from python_ops.maintenance.rules.wording import target_size_text
from python_ops.ops.optimize.planning.plan import OptimizePlan
from python_ops.ops.results import (
    LogCleanupResult,
    OptimizeResult,
    TableHealth,
    VacuumGroup,
    VacuumResult,
)
from python_ops.ops.vacuum.deleting.delete import group_by_prefix
from python_ops.values import retention_text

if TYPE_CHECKING:  # the stats op needs numpy, which VACUUM's command never imports
    from python_ops.ops.results import StatsResult

DRY_RUN_NOTE = "dry run: nothing was deleted or written"


def threshold_text(size_bytes: int) -> str:
    """A size threshold as it was most likely set: ``32 MiB`` for 33,554,432 bytes, else scaled."""
    mib = 1024 * 1024
    if size_bytes and size_bytes % mib == 0:
        return f"{size_bytes // mib} MiB"
    return format_bytes(size_bytes)


def vacuum_text(result: VacuumResult, *, policy: str) -> str:
    """A VACUUM result: the retention policy that applied, what was (or would be) deleted.

    Args:
        result: The result.
        policy: Where the retention came from, in words (``retention_policy``).

    Returns:
        The lines to print.
    """
    if result.dry_run:
        count, size, dirs = result.files_found, result.bytes_found, result.dirs_found
        verb = "would delete"
    else:
        count, size, dirs = result.files_deleted, result.bytes_deleted, result.dirs_deleted
        verb = "deleted"
    if result.mode == "lite":
        span = result.commit_range
        found = (
            f"read the removes of commits {span[0]}..{span[1]}"
            if span
            else "no commit to read since the last VACUUM"
        ) + f" in {result.identify_s:.2f} s (nothing listed)"
    else:
        found = f"listed {result.files_listed} files in {result.identify_s:.2f} s"
    lines = [
        f"vacuum {result.location} at version {result.table_version}",
        f"  mode {result.mode.upper()}: {result.mode_reason}",
        f"  retention {result.retention_text}: {policy}",
        f"  {verb} {files(count, size)} and {dirs} director{'y' if dirs == 1 else 'ies'}; {found}",
    ]
    lines += _prefix_lines(result)
    for kept in result.dirs_kept:
        lines.append(f"  kept directory {kept.path}: {kept.reason}")
    if result.delete_failures:
        shown = result.paths_not_deleted[:20]
        more = len(result.paths_not_deleted) - len(shown)
        lines.append(
            f"  {result.delete_failures} paths could not be deleted: {', '.join(shown)}"
            + (f" and {more} more (--json lists all)" if more > 0 else "")
        )
    if result.last_vacuum_version is not None:
        lines.append(
            "  recorded in _delta_log/_last_vacuum_info: the next LITE starts after version "
            f"{result.last_vacuum_version}"
        )
    if result.dry_run:
        lines.append(DRY_RUN_NOTE)
    return "\n".join(lines)


def _prefix_lines(result: VacuumResult) -> list[str]:
    """Per partition: what was (or would be) deleted; a real run's paths not deleted apart.

    ``by_prefix`` counts what was selected; after a real run that could not delete some of it
    (or kept a directory a writer filled), the selected paths not deleted are taken off each
    partition's counts and named as not deleted, so no line counts a file that is still there.
    """
    missed = set(result.paths_not_deleted) | {k.path for k in result.dirs_kept}
    left = {} if result.dry_run or not missed else _groups(result, missed)
    lines = []
    for group in result.by_prefix:
        prefix = group.prefix or "(table root)"
        kept = left.get(group.prefix, VacuumGroup(group.prefix, 0, 0, 0))
        n, size, dirs = group.files - kept.files, group.bytes - kept.bytes, group.dirs - kept.dirs
        line = f"    {prefix}: {files(n, size)}, {dirs} dirs"
        if kept.files or kept.dirs:
            line += f"; not deleted: {files(kept.files, kept.bytes)}, {kept.dirs} dirs"
        lines.append(line)
    return lines


def _groups(result: VacuumResult, paths: set[str]) -> dict[str, VacuumGroup]:
    """The selected paths among ``paths``, counted per partition as ``by_prefix`` counts."""
    chosen = (f for f in result.paths if f.path in paths)
    return {g.prefix: g for g in group_by_prefix(chosen)}


def cleanup_logs_text(result: LogCleanupResult, *, policy: str) -> str:
    """A log cleanup result: the retention that applied, the log files (to be) deleted.

    Args:
        result: The result.
        policy: Where the retention came from, in words.

    Returns:
        The lines to print.
    """
    if result.dry_run:
        count, size, verb = result.files_found, result.bytes_found, "would delete"
    else:
        count, size, verb = result.files_deleted, result.bytes_deleted, "deleted"
    lines = [
        f"cleanup-logs {result.location} at version {result.table_version}",
        f"  retention {result.retention_days:g} days: {policy}",
        f"  {verb} {count} log file{'' if count == 1 else 's'} ({format_bytes(size)}); "
        f"oldest version kept {result.oldest_version_kept}"
        + (f"; skipped: {result.skipped_reason}" if result.skipped_reason else ""),
    ]
    if result.checkpoint_first is not None:
        written = "would write" if result.dry_run else "wrote"
        by = f" ({result.checkpoint_writer})" if result.checkpoint_writer else ""
        lines.append(f"  {written} a checkpoint at version {result.checkpoint_first} first{by}")
    for f in result.files:
        version = f.version if f.version is not None else "-"
        lines.append(f"    {f.kind:<10} v{version}  {f.path}")
    if result.delete_failures:
        lines.append(
            f"  {result.delete_failures} log files could not be deleted: "
            + ", ".join(result.paths_not_deleted)
        )
    if result.dry_run:
        lines.append(DRY_RUN_NOTE)
    return "\n".join(lines)


def optimize_plan_text(plan: OptimizePlan) -> str:
    """An OPTIMIZE plan (a dry run): what would be rewritten, per partition and in total."""
    kind = f"Z-order by {', '.join(plan.zorder_by)}" if plan.zorder_by else "compaction"
    lines = [
        f"optimize {plan.location} at version {plan.version}: {kind}, target "
        f"{target_size_text(plan.target_size_bytes)} ({plan.target_source}), scope {plan.scope}"
        + (f" since version {plan.since_version}" if plan.since_version is not None else "")
    ]
    for p in plan.work:
        where = ", ".join(f"{k}={v}" for k, v in p.partition_values.items()) or "(table)"
        rewritten = sum(len(b.files) for b in p.bins)
        lines.append(
            f"  {where}: would rewrite {rewritten} of {p.files} files into {len(p.bins)} "
            f"bin(s), {format_bytes(sum(b.bytes for b in p.bins))}"
        )
    lines.append(
        f"  total: {len(plan.work)} partition(s), {sum(len(p.bins) for p in plan.work)} bin(s), "
        f"{plan.files_to_rewrite} files, {format_bytes(plan.bytes_to_rewrite)} would be rewritten"
    )
    lines.append(DRY_RUN_NOTE)
    return "\n".join(lines)


def optimize_text(result: OptimizeResult) -> str:
    """A real OPTIMIZE's result: files rewritten, commits, the writer."""
    return (
        f"optimize {result.location} ({result.writer}): rewrote "
        f"{files(result.files_removed, result.bytes_removed)} into "
        f"{files(result.files_added, result.bytes_added)} in {len(result.commits)} commit(s)"
        + (f"; {result.skipped_reason}" if result.skipped_reason else "")
    )


def health_text(h: TableHealth) -> str:
    """A table's health as label/value lines."""
    checkpoint = (
        f"checkpoint at version {h.checkpoint_version}"
        if h.checkpoint_version is not None
        else "no checkpoint"
    )
    partitions = (
        f"{h.num_partitions} ({', '.join(h.partition_columns)})"
        if h.partition_columns
        else "not partitioned"
    )
    rows = [
        ("table", h.location),
        ("version", f"{h.version} ({checkpoint})"),
        ("files", files(h.num_files, h.total_bytes)),
        (
            "small files",
            f"{h.num_small_files} ({h.small_file_share:.0%}) below "
            f"{threshold_text(h.small_file_threshold_bytes)}",
        ),
        ("partitions", partitions),
        ("log files", str(h.num_log_files)),
        (
            "tombstones",
            f"{h.num_tombstones} removed files within the "
            f"{retention_text(h.deleted_file_retention_hours)} retention",
        ),
        ("read in", f"{h.duration_s:.2f} s (the Delta log only)"),
    ]
    if h.deleted_rows:  # deletion vectors: soft-deleted rows still in the data files
        rows.insert(
            -1,
            (
                "deleted rows",
                f"{h.deleted_rows} ({h.deleted_row_share:.1%}; up to "
                f"{h.max_partition_deleted_share:.1%} in a partition); a purge would free about "
                f"{format_bytes(h.purge_reclaimable_bytes)}",
            ),
        )
    return "\n".join(f"{label:<12} {value}" for label, value in rows)


def stats_text(r: StatsResult) -> str:
    """The statistics op's result in words."""
    verb = "lack" if r.dry_run or r.commit_version is None else "lacked"
    lines = [
        f"stats {r.location} (version {r.read_version}): {r.files_due} of {r.num_files} "
        f"file(s) {verb} statistics for {len(r.stats_columns)} statistics column(s)"
        + (f"; watched: {', '.join(r.watched_columns)}" if r.watched_columns else "")
    ]
    if r.commit_version is not None:
        lines.append(
            f"  filled in {r.files_updated} file(s) in version {r.commit_version} (COMPUTE "
            f"STATS, no data file rewritten): {r.files_from_footer} from Parquet footers, "
            f"{r.files_read} read ({format_bytes(r.bytes_read)})"
            + (
                f"; {r.files_with_deletion_vectors} keep a deletion vector (tightBounds=false)"
                if r.files_with_deletion_vectors
                else ""
            )
        )
    elif r.dry_run:
        lines.append("  dry run: nothing computed or written")
    else:
        lines.append("  nothing to do")
    if r.stats_columns_after is not None:
        done = "would set" if r.dry_run else "set"
        lines.append(f"  {done} delta.dataSkippingStatsColumns = {r.stats_columns_after}")
    return "\n".join(lines)
