"""Command line for schedulers: ``python -m python_ops <op> <table-path> ...``."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

from python_ops.errors import MaintenanceError, OptimizeConflictError
from python_ops.maintenance.registry import op_spec
from python_ops.ops.health import table_health
from python_ops.ops.optimize.plan import DEFAULT_MIN_SMALL_FILES
from python_ops.ops.results import LogCleanupResult, OptimizeResult, VacuumResult, to_dict


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m python_ops", description=__doc__)
    parser.add_argument(
        "--engine",
        choices=("in-process", "embedded", "classic"),
        default="in-process",
        help="where VACUUM's selection runs: in this process on Arrow (default, no engine "
        "started), the embedded Sail engine, or local classic Spark",
    )
    sub = parser.add_subparsers(dest="op", required=True)

    vac = sub.add_parser("vacuum", help="delete files the table no longer references")
    vac.add_argument("table", help="table location (path or URI)")
    vac.add_argument("--retention-hours", type=float, default=None)
    vac.add_argument("--dry-run", action="store_true", help="report only, delete nothing")
    vac.add_argument("--partition-filter", default=None, help="SQL predicate on partition columns")
    vac.add_argument(
        "--allow-short-retention",
        action="store_true",
        help="allow a retention below the table's minimum (unsafe with concurrent writers)",
    )
    vac.add_argument("--workers", type=int, default=8, help="parallel list/delete calls")
    vac.add_argument(
        "--cluster-listing",
        action="store_true",
        help="object stores: list prefixes in Spark tasks on the cluster, not local threads",
    )
    vac.add_argument("--json", action="store_true", help="print the result as JSON")

    logs = sub.add_parser("cleanup-logs", help="delete expired _delta_log files")
    logs.add_argument("table", help="table location (path or URI)")
    logs.add_argument("--retention-days", type=float, default=None)
    logs.add_argument("--dry-run", action="store_true", help="report only, delete nothing")
    logs.add_argument("--no-checkpoint", action="store_true", help="never write a checkpoint first")
    logs.add_argument(
        "--force", action="store_true", help="clean even if the table disables log cleanup"
    )
    logs.add_argument("--json", action="store_true", help="print the result as JSON")

    opt = sub.add_parser("optimize", help="compact small files or Z-order")
    opt.add_argument("table", help="table location (path or URI)")
    opt.add_argument("--zorder-by", default=None, help="comma-separated Z-order columns")
    opt.add_argument("--where", default=None, help="predicate on partition columns")
    opt.add_argument("--full", action="store_true", help="not only partitions changed since")
    opt.add_argument("--target-size", type=int, default=None, help="target file size, bytes")
    opt.add_argument("--min-small-files", type=int, default=DEFAULT_MIN_SMALL_FILES)
    opt.add_argument("--dry-run", action="store_true", help="print the plan only")
    opt.add_argument("--json", action="store_true", help="print the result as JSON")

    maint = sub.add_parser(
        "maintain", help="what dbt run-operation maintain_all does, from the dbt manifest"
    )
    maint.add_argument(
        "--project-dir", default=".", help="dbt project (reads target/manifest.json)"
    )
    maint.add_argument(
        "--warehouse",
        default=None,
        help="embedded warehouse directory (default: $SPARKDELTA_WAREHOUSE, else "
        "<project-dir>/warehouse)",
    )
    maint.add_argument(
        "--select", nargs="*", default=None, help="dbt selection (as dbt ls --select), by dbt"
    )
    maint.add_argument("--exclude", nargs="*", default=None, help="dbt selection to leave out")
    maint.add_argument("--selector", default=None, help="a selector of the project's selectors.yml")
    maint.add_argument("--state", default=None, help="artifacts directory for state: methods")
    maint.add_argument("--ops", default=None, help="comma-separated: vacuum,optimize,cleanup_logs")
    maint.add_argument("--all", action="store_true", help="run every enabled op, not only due ones")
    maint.add_argument("--dry-run", action="store_true", help="report only, change nothing")
    maint.add_argument("--retention-hours", type=float, default=None)
    maint.add_argument("--threads", type=int, default=1, help="models maintained in parallel")
    maint.add_argument("--time-budget-s", type=float, default=None)
    maint.add_argument("--history-location", default=None, help="maintenance history table")
    maint.add_argument("--json", action="store_true", help="print the run as JSON")

    health = sub.add_parser("health", help="table health from the Delta log")
    health.add_argument("table")
    health.add_argument("--json", action="store_true")
    return parser


def _print_vacuum(result: VacuumResult) -> None:
    verb = "would delete" if result.dry_run else "deleted"
    files = result.files_found if result.dry_run else result.files_deleted
    size = result.bytes_found if result.dry_run else result.bytes_deleted
    print(
        f"vacuum {result.location} (version {result.table_version}, retention "
        f"{result.retention_hours:g} h, {result.retention_source}): {verb} {files} files "
        f"({size} bytes) and {result.dirs_found} directories; listed {result.files_listed} "
        f"files in {result.identify_s:.2f} s"
    )
    for group in result.by_prefix:
        prefix = group.prefix or "(table root)"
        print(f"  {prefix}: {group.files} files, {group.bytes} bytes, {group.dirs} dirs")
    if result.delete_failures:
        print(f"  {result.delete_failures} paths could not be deleted")


def main(argv: Sequence[str] | None = None, *, spark: Any = None) -> int:
    """Run the command line.

    Args:
        argv: Arguments (default: ``sys.argv[1:]``).
        spark: A Spark session to run on instead of starting ``--engine`` (tests share one).

    Returns:
        The process exit code: 0 on success, 2 for bad input, 1 for other failures.
    """
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    try:
        if args.op == "health":
            health = table_health(args.table)
            print(json.dumps(to_dict(health)) if args.json else health)
            return 0
        if args.op == "cleanup-logs":
            return _run_cleanup_logs(args)
        if args.op == "optimize":
            return _run_optimize(args)
        if args.op == "maintain":
            from python_ops.cli.maintain import run_maintain

            return run_maintain(args)
        return _run_vacuum(args, spark)
    except MaintenanceError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


def run(argv: Sequence[str] | None = None) -> int:
    """``main`` for a process: an unexpected error is one line on stderr, not a traceback.

    Named errors (exit 2) and op failures (exit 1) are ``main``'s; anything else is a bug,
    reported as such with exit 1 (set ``PYTHON_OPS_DEBUG=1`` for the traceback).

    Args:
        argv: Arguments (default: ``sys.argv[1:]``).

    Returns:
        The process exit code.
    """
    try:
        return main(argv)
    except Exception as err:
        if os.environ.get("PYTHON_OPS_DEBUG"):
            raise
        print(
            f"error: internal error, nothing further was done ({type(err).__name__}: {err}). "
            "Please report it; PYTHON_OPS_DEBUG=1 shows the traceback.",
            file=sys.stderr,
        )
        return 1


def _run_vacuum(args: Any, spark: Any) -> int:
    from python_ops.spark_sessions import SailEngine, classic_session

    wants_spark = args.engine != "in-process" or args.cluster_listing
    sail = SailEngine() if spark is None and wants_spark and args.engine != "classic" else None
    if spark is None and wants_spark:
        spark = sail.spark if sail else classic_session()
    try:
        result: VacuumResult = op_spec("vacuum").invoke(
            args.table,
            spark=spark,
            model=None,
            retention_hours=args.retention_hours,
            dry_run=args.dry_run,
            partition_filter=args.partition_filter,
            allow_short_retention=args.allow_short_retention,
            max_workers=args.workers,
            cluster_listing=args.cluster_listing,
            engine="in_process" if args.engine == "in-process" else "spark",
        )
    finally:
        if sail:
            sail.stop()
    if args.json:
        print(json.dumps(result.to_dict()))
    else:
        _print_vacuum(result)
    return 1 if result.delete_failures else 0


def _run_cleanup_logs(args: Any) -> int:
    result: LogCleanupResult = op_spec("cleanup_logs").invoke(
        args.table,
        spark=None,
        model=None,
        retention_days=args.retention_days,
        dry_run=args.dry_run,
        checkpoint_if_needed=not args.no_checkpoint,
        force=args.force,
    )
    if args.json:
        print(json.dumps(result.to_dict()))
        return 1 if result.delete_failures else 0
    verb = "would delete" if result.dry_run else "deleted"
    count = result.files_found if result.dry_run else result.files_deleted
    print(
        f"cleanup-logs {result.location} (retention {result.retention_days:g} days, "
        f"{result.retention_source}): {verb} {count} log files; oldest version kept "
        f"{result.oldest_version_kept}"
        + (f"; skipped: {result.skipped_reason}" if result.skipped_reason else "")
    )
    for f in result.files:
        print(f"  {f.kind:<10} v{f.version if f.version is not None else '-'}  {f.path}")
    return 1 if result.delete_failures else 0


def _run_optimize(args: Any) -> int:
    from python_ops.ops.optimize.plan import plan_optimize

    columns = [c.strip() for c in args.zorder_by.split(",")] if args.zorder_by else None
    options = {
        "zorder_by": columns,
        "where": args.where,
        "full": args.full,
        "target_size_bytes": args.target_size,
        "min_small_files": args.min_small_files,
    }
    if args.dry_run and not args.json:
        print(plan_optimize(args.table, **options).describe())
        return 0
    try:
        result: OptimizeResult = op_spec("optimize").invoke(
            args.table, spark=None, model=None, dry_run=args.dry_run, **options
        )
    except OptimizeConflictError as err:
        # a conflict is not bad input: report what was committed and left behind, exit 1
        print(f"error: {err}", file=sys.stderr)
        if args.json and isinstance(err.result, OptimizeResult):
            print(json.dumps(err.result.to_dict()))
        return 1
    if args.json:
        print(json.dumps(result.to_dict()))
    else:
        print(
            f"optimize {result.location} ({result.writer}): {result.files_removed} files "
            f"into {result.files_added} in {len(result.commits)} commit(s)"
            + (f"; {result.skipped_reason}" if result.skipped_reason else "")
        )
    return 0
