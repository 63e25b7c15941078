"""Command line for schedulers: ``python -m python_ops <op> <table-path> ...``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from python_ops.cli import policy, render
from python_ops.cli.arguments import build_parser
from python_ops.cli.history_row import recorded_run
from python_ops.cli.jars import run_jars
from python_ops.cli.lean_arrow import lean_arrow
from python_ops.cli.logs import configure_logging
from python_ops.delta.table.properties import DELETED_FILE_RETENTION, LOG_RETENTION
from python_ops.errors import ChangedThenFailedError, MaintenanceError, OptimizeConflictError
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.op_keys import as_model_setting
from python_ops.maintenance.configuration.policy import unrecorded_note
from python_ops.maintenance.runs.registry import op_spec
from python_ops.ops.health import table_health
from python_ops.ops.results import LogCleanupResult, OptimizeResult, VacuumResult, to_dict

#: The exit code when stdout's reader has gone (128 + SIGPIPE, as a shell reports it).
EXIT_BROKEN_PIPE = 141


def main(argv: Sequence[str] | None = None, *, spark: Any = None) -> int:
    """Run the command line.

    Args:
        argv: Arguments (default: ``sys.argv[1:]``).
        spark: A Spark session to run on instead of starting ``--engine`` (tests share one).

    Returns:
        The process exit code: 0 on success, 2 for bad input (a refusal: a named error, or
        ``maintain`` finding no table to maintain), 1 for other failures.
    """
    return _dispatch(build_parser(__doc__).parse_args(argv), spark)


def _dispatch(args: argparse.Namespace, spark: Any) -> int:
    # each call is one command: its warnings are given once each, whatever runs them
    args.invocation = Invocation()
    undo_logging = configure_logging(verbose=args.verbose, audit_file=args.audit_log)
    try:
        if args.op == "health":
            health = table_health(args.table)
            print(json.dumps(to_dict(health)) if args.json else render.health_text(health))
            return 0
        if args.op == "cleanup-logs":
            return _run_cleanup_logs(args)
        if args.op == "optimize":
            return _run_optimize(args)
        if args.op == "purge":
            return _run_purge(args)
        if args.op == "jars":
            return run_jars(args)
        if args.op == "stats":
            return _run_stats(args)
        if args.op == "maintain":
            from python_ops.cli.maintain import run_maintain

            return run_maintain(args)
        if args.op == "report":
            from python_ops.cli.report import run_report

            return run_report(args)
        if args.op == "advise":
            from python_ops.cli.advise import run_advise

            return run_advise(args)
        return _run_vacuum(args, spark)
    except ChangedThenFailedError as err:  # the table changed: never "nothing changed"
        print(f"error: {err}", file=sys.stderr)
        return 1
    except MaintenanceError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    finally:
        undo_logging()


def run(argv: Sequence[str] | None = None) -> int:
    """``main`` for a process: an unexpected error is one line on stderr, not a traceback.

    Named errors (exit 2) and op failures (exit 1) are ``main``'s; anything else is a bug,
    reported as such with exit 1 (set ``PYTHON_OPS_DEBUG=1`` for the traceback). Output cut
    short by its reader (``... | head``) ends the command quietly with exit 141.

    Args:
        argv: Arguments (default: ``sys.argv[1:]``).

    Returns:
        The process exit code.
    """
    args = build_parser(__doc__).parse_args(
        argv
    )  # --help and usage errors exit here, as argparse does
    try:
        if _starts_no_engine(args):
            with lean_arrow():  # see lean_arrow: no pandas, the system allocator
                code = _dispatch(args, None)
        else:
            code = _dispatch(args, None)
        sys.stdout.flush()  # a pipe's reader that has gone is found here, not at exit
        return code
    except BrokenPipeError:
        # the reader went away (``... | head``): not an error of ours. What is still buffered
        # goes nowhere, and the exit code is a shell's for SIGPIPE
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except Exception as err:
        if os.environ.get("PYTHON_OPS_DEBUG"):
            raise
        print(
            f"error: internal error, nothing further was done ({type(err).__name__}: {err}). "
            "Please report it; PYTHON_OPS_DEBUG=1 shows the traceback.",
            file=sys.stderr,
        )
        return 1


def _starts_no_engine(args: argparse.Namespace) -> bool:
    """Whether the command runs wholly in this process (no Spark engine, which needs pandas)."""
    if args.op == "vacuum":
        return bool(args.engine == "in-process" and not args.cluster_listing)
    return bool(args.op in ("health", "cleanup-logs", "stats", "report"))


def _run_vacuum(args: Any, spark: Any) -> int:
    from python_ops.spark_sessions import SailEngine, classic_session

    location, model = policy.resolve(args)
    options, model_words = policy.vacuum_options(args, model)
    wants_spark = args.engine != "in-process" or args.cluster_listing
    sail = SailEngine() if spark is None and wants_spark and args.engine != "classic" else None
    if spark is None and wants_spark:
        spark = sail.spark if sail else classic_session()
    try:
        with recorded_run(model, "vacuum", dry_run=args.dry_run) as run:
            run.result = _invoke_vacuum(args, location, model, options, spark)
            result: VacuumResult = run.result
            run.parameters = {"retention_hours": result.retention_hours, "mode": result.mode}
    finally:
        if sail:
            sail.stop()
    if args.json:
        result.write_json(sys.stdout)  # streams the path list
    else:
        words = policy.retention_words(
            result.retention_source,
            prop=DELETED_FILE_RETENTION,
            model_words=model_words,
            flag="--retention-hours",
            has_model=model is not None,
        )
        print(render.vacuum_text(result, policy=words))
    # a directory kept because it was not empty is VACUUM working as meant, not a failure
    return 1 if result.delete_failures else 0


def _invoke_vacuum(
    args: Any, location: str, model: Any, options: dict[str, Any], spark: Any
) -> VacuumResult:
    with policy.fix_as_flag():  # on a table path; a model's key where --model names one
        result: VacuumResult = op_spec("vacuum").invoke(
            location,
            spark=spark,
            model=model.config.model if model else None,
            invocation=args.invocation,
            words=policy.FLAG_WORDS,
            dry_run=args.dry_run,
            partition_filter=args.partition_filter,
            max_workers=args.workers,
            cluster_listing=args.cluster_listing,
            engine="in_process" if args.engine == "in-process" else "spark",
            **options,
            **({"inventory": args.inventory} if args.inventory else {}),
        )
    return result


def _run_cleanup_logs(args: Any) -> int:
    location, model = policy.resolve(args)
    options, model_words = policy.cleanup_logs_options(args, model)
    with recorded_run(model, "cleanup_logs", dry_run=args.dry_run) as run:
        result: LogCleanupResult = op_spec("cleanup_logs").invoke(
            location,
            spark=None,
            model=model.config.model if model else None,
            dry_run=args.dry_run,
            checkpoint_if_needed=not args.no_checkpoint,
            force=args.force,
            **options,
        )
        run.result = result
        run.parameters = {"retention_days": result.retention_days}
    if args.json:
        print(json.dumps(result.to_dict()))
        return 1 if result.delete_failures else 0
    words = policy.retention_words(
        result.retention_source,
        prop=LOG_RETENTION,
        model_words=model_words,
        flag="--retention-days",
        has_model=model is not None,
    )
    text = render.cleanup_logs_text(result, policy=words)
    note = unrecorded_note(model.config) if model is not None else ""
    print(text + (f"\n  {note}" if note else ""))
    return 1 if result.delete_failures else 0


def _run_optimize(args: Any) -> int:
    from python_ops.ops.optimize.planning.plan import plan_optimize

    location, model = policy.resolve(args)
    options = policy.optimize_options(args, model)
    name = model.config.model if model else None
    if args.dry_run and not args.json:
        # planned for the writer a real run would use (Delta's for tables delta-rs refuses);
        # nothing is started for a dry run
        from python_ops.delta.state.snapshot import read_snapshot
        from python_ops.delta.table.features import Op
        from python_ops.ops.writer_choice import delta_writer_for

        snapshot = read_snapshot(location)
        op = Op.ZORDER if options.get("zorder_by") else Op.COMPACTION
        writer, _sql = delta_writer_for(snapshot, op, None, snapshot.location)
        options.pop("memory_budget_bytes", None)  # the plan does not depend on it
        with recorded_run(model, "optimize", dry_run=True) as run:
            with as_model_setting(name):
                plan = plan_optimize(location, writer=writer, snapshot=snapshot, **options)
            run.result = plan
            run.parameters = {k: v for k, v in options.items() if v is not None}
        print(render.optimize_plan_text(plan))
        return 0
    try:
        with recorded_run(model, "optimize", dry_run=args.dry_run) as run:
            result: OptimizeResult = op_spec("optimize").invoke(
                location, spark=None, model=name, dry_run=args.dry_run, **options
            )
            run.result = result
            run.parameters = {k: v for k, v in options.items() if v is not None}
    except OptimizeConflictError as err:
        # a conflict is not bad input: report what was committed and left behind, exit 1
        print(f"error: {err}", file=sys.stderr)
        if args.json and isinstance(err.result, OptimizeResult):
            print(json.dumps(err.result.to_dict()))
        return 1
    if args.json:
        print(json.dumps(result.to_dict()))
    else:
        print(render.optimize_text(result))
    return 0


def _run_purge(args: Any) -> int:
    options: dict[str, Any] = {"dry_run": args.dry_run}
    if args.deleted_ratio is not None:
        options["deleted_ratio"] = args.deleted_ratio
    result = op_spec("purge").invoke(args.table, spark=None, model=None, **options)
    if args.json:
        print(json.dumps(to_dict(result)))
        return 0
    verb = "would purge" if result.dry_run else "purged"
    print(
        f"purge {result.location}: {result.deleted_rows} of {result.rows} rows deleted; "
        f"{verb} {len(result.partitions_due)} partition(s), {result.files_to_rewrite} file(s), "
        f"about {result.reclaimable_bytes} bytes to reclaim"
        + (f" ({result.writer}, version {result.commit})" if result.commit is not None else "")
        + (f"; {result.skipped_reason}" if result.skipped_reason else "")
    )
    return 0


def _run_stats(args: Any) -> int:
    columns = [c.strip() for c in (args.columns or "").split(",") if c.strip()]
    result = op_spec("stats").invoke(
        args.table, spark=None, model=None, columns=columns, dry_run=args.dry_run
    )
    if args.json:
        print(json.dumps(result.to_dict()))
        return 0
    print(render.stats_text(result))
    return 0
