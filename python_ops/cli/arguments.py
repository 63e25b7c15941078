"""The command line's arguments: one small function per command, the parser built from them.

``COMMANDS`` is the registry: each command's name, help and arguments. ``build_parser`` adds
the global flags, then every command with the logging flags each one takes.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from python_ops.cli import policy
from python_ops.cli.jars import add_jars_parser
from python_ops.cli.project import add_project_arguments
from python_ops.errors import MaintenanceError
from python_ops.maintenance.configuration.config import parse_size
from python_ops.ops.optimize.planning.plan import DEFAULT_MIN_SMALL_FILES
from python_ops.ops.vacuum.sources.mode import MODES


@dataclass(frozen=True)
class Command:
    """One command of the registry.

    Attributes:
        name: What the user types (``vacuum``, ``cleanup-logs``, ...).
        help: One line for ``--help``.
        arguments: Adds the command's own arguments to its parser.
    """

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]


def size_bytes(text: str) -> int:
    """A size flag's bytes (``1073741824``, ``512MiB``, ``1GiB``, ``2MB``).

    A plain whole number is passed on as it is: the op checks its range and names the setting.
    """
    if text.strip().lstrip("-").isdigit():
        return int(text)
    try:
        return parse_size("", "size", text)
    except MaintenanceError as err:
        raise argparse.ArgumentTypeError(f"{text!r}: use bytes or a size like '1GiB'") from err


def _json_flag(parser: argparse.ArgumentParser, what: str = "the result") -> None:
    parser.add_argument("--json", action="store_true", help=f"print {what} as JSON")


def _table_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("table", help="table location (path or URI)")


def _vacuum_arguments(vac: argparse.ArgumentParser) -> None:
    policy.add_model_arguments(vac)
    vac.add_argument("--retention-hours", type=float, default=None)
    vac.add_argument("--dry-run", action="store_true", help="report only, delete nothing")
    vac.add_argument("--partition-filter", default=None, help="SQL predicate on partition columns")
    vac.add_argument(
        "--allow-short-retention",
        action="store_true",
        help="allow a retention below the table's minimum (unsafe with concurrent writers)",
    )
    vac.add_argument(
        "--mode",
        choices=MODES,
        default=None,
        help="full: list storage (finds untracked files too); lite: read the removed files from "
        "the log since the last VACUUM (_delta_log/_last_vacuum_info, as Delta's VACUUM LITE); "
        "auto: lite when it can be complete, full when it cannot and every "
        "--full-interval-days (default: the model's maintenance_vacuum_mode with --model, else "
        "full)",
    )
    vac.add_argument(
        "--full-interval-days",
        type=float,
        default=None,
        help="auto: days between FULL runs (default: the model's "
        "maintenance_vacuum_full_interval_days with --model, else 7)",
    )
    vac.add_argument(
        "--inventory",
        default=None,
        help="an inventory report of the table's storage used instead of listing it (Parquet "
        "or a Delta table with path, length, isDir, modificationTime; as Delta's VACUUM ... "
        "USING INVENTORY); the run is FULL",
    )
    vac.add_argument("--workers", type=int, default=8, help="parallel list/delete calls")
    vac.add_argument(
        "--cluster-listing",
        action="store_true",
        help="object stores: list prefixes in Spark tasks on the cluster, not local threads",
    )
    _json_flag(vac)


def _cleanup_arguments(logs: argparse.ArgumentParser) -> None:
    policy.add_model_arguments(logs)
    logs.add_argument("--retention-days", type=float, default=None)
    logs.add_argument("--dry-run", action="store_true", help="report only, delete nothing")
    logs.add_argument("--no-checkpoint", action="store_true", help="never write a checkpoint first")
    logs.add_argument(
        "--force", action="store_true", help="clean even if the table disables log cleanup"
    )
    _json_flag(logs)


def _optimize_arguments(opt: argparse.ArgumentParser) -> None:
    policy.add_model_arguments(opt)
    opt.add_argument("--zorder-by", default=None, help="comma-separated Z-order columns")
    opt.add_argument("--where", default=None, help="predicate on partition columns")
    opt.add_argument("--full", action="store_true", help="not only partitions changed since")
    opt.add_argument(
        "--target-size",
        type=size_bytes,
        default=None,
        help="target file size: bytes or a size like '128MB' (as maintenance_target_file_size)",
    )
    opt.add_argument(
        "--min-small-files",
        type=int,
        default=None,
        help="small files a partition needs (default: the model's, else "
        f"{DEFAULT_MIN_SMALL_FILES})",
    )
    opt.add_argument(
        "--memory-budget",
        type=size_bytes,
        default=None,
        help="memory our Z-order may hold per partition, bytes or a size like '1GiB' (default: "
        "the model's maintenance_memory_budget, else 1 GiB); larger partitions are sorted in "
        "runs spilled to the temp directory",
    )
    opt.add_argument("--dry-run", action="store_true", help="print the plan only")
    _json_flag(opt)


def _maintain_arguments(maint: argparse.ArgumentParser) -> None:
    add_project_arguments(maint)
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
    _json_flag(maint, "the run")


def _advise_arguments(adv: argparse.ArgumentParser) -> None:
    add_project_arguments(adv)
    adv.add_argument("--select", nargs="*", default=None, help="dbt selection of models")
    adv.add_argument("--exclude", nargs="*", default=None, help="dbt selection to leave out")
    adv.add_argument(
        "--no-measure", action="store_true", help="do not measure files admitted per lookup"
    )
    _json_flag(adv, "the advice")


def _report_arguments(rep: argparse.ArgumentParser) -> None:
    add_project_arguments(rep)
    rep.add_argument(
        "--select", nargs="*", default=None, help="dbt selection (as dbt ls --select), by dbt"
    )
    rep.add_argument("--exclude", nargs="*", default=None, help="dbt selection to leave out")
    rep.add_argument("--selector", default=None, help="a selector of the project's selectors.yml")
    rep.add_argument("--state", default=None, help="artifacts directory for state: methods")
    rep.add_argument("--history-location", default=None, help="maintenance history table")
    rep.add_argument(
        "--html",
        default=None,
        metavar="FILE",
        help="write the history as charts to FILE: one self-contained HTML page (no server, "
        "nothing fetched when it opens) instead of printing the table",
    )
    _json_flag(rep, "the rows")


def _health_arguments(health: argparse.ArgumentParser) -> None:
    _table_argument(health)
    _json_flag(health, "the health")


def _purge_arguments(purge: argparse.ArgumentParser) -> None:
    _table_argument(purge)
    purge.add_argument(
        "--deleted-ratio", type=float, default=None, help="deleted-row share (default 0.05)"
    )
    purge.add_argument("--dry-run", action="store_true", help="report the partitions only")
    _json_flag(purge)


def _stats_arguments(stats: argparse.ArgumentParser) -> None:
    _table_argument(stats)
    stats.add_argument(
        "--columns",
        default=None,
        help="comma-separated columns to watch besides the table's indexed columns; one not "
        "indexed is added to delta.dataSkippingStatsColumns",
    )
    stats.add_argument("--dry-run", action="store_true", help="count the files due only")
    _json_flag(stats)


COMMANDS: tuple[Command, ...] = (
    Command("vacuum", "delete files the table no longer references", _vacuum_arguments),
    Command("cleanup-logs", "delete expired _delta_log files", _cleanup_arguments),
    Command("optimize", "compact small files or Z-order", _optimize_arguments),
    Command(
        "maintain",
        "what dbt run-operation maintain_all does, from the dbt manifest",
        _maintain_arguments,
    ),
    Command(
        "advise",
        "clustering columns from the project's SQL: what readers filter and join on",
        _advise_arguments,
    ),
    Command(
        "report",
        "what dbt run-operation maintenance_report prints (--html: the history as charts)",
        _report_arguments,
    ),
    Command("health", "table health from the Delta log", _health_arguments),
    Command(
        "purge",
        "REORG ... APPLY (PURGE) of partitions with many soft-deleted rows (Delta)",
        _purge_arguments,
    ),
    Command(
        "stats",
        "fill in missing file statistics (Delta's COMPUTE STATS commit, no rewrite)",
        _stats_arguments,
    ),
)


def _add_logging_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also print each op's audit record (a JSON line) and debug messages on stderr",
    )
    parser.add_argument(
        "--audit-log",
        default=None,
        metavar="FILE",
        help="append each op's audit record to FILE (one JSON object per line)",
    )


def build_parser(description: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: the global flags, then every command of ``COMMANDS``.

    ``allow_abbrev=False`` everywhere: an option is only ever its full name (``--mode`` is not
    ``--model`` cut short, and a future option cannot change what a short form means).

    Args:
        description: The program's description for ``--help``.

    Returns:
        The parser.
    """
    parser = argparse.ArgumentParser(
        prog="python -m python_ops", description=description, allow_abbrev=False
    )
    parser.add_argument(
        "--engine",
        choices=("in-process", "embedded", "classic"),
        default="in-process",
        help="where VACUUM's selection runs: in this process on Arrow (default, no engine "
        "started), the embedded Sail engine, or local classic Spark",
    )
    sub = parser.add_subparsers(dest="op", required=True)
    for command in COMMANDS:
        sub_parser = sub.add_parser(command.name, help=command.help, allow_abbrev=False)
        command.arguments(sub_parser)
        _add_logging_flags(sub_parser)
    _add_logging_flags(add_jars_parser(sub))
    return parser
