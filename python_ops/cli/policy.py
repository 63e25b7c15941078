"""Which policy a path command applies: its flags, a dbt model's config (``--model``), the table.

``python -m python_ops vacuum <path>`` alone knows only the table: its retention is the
``--retention-hours`` given, else the table's ``delta.deletedFileRetentionDuration``, else
Delta's 168 h, whatever a dbt model says. With ``--model NAME [--project-dir DIR]`` the model's
maintenance config from the manifest fills every option not given on the command line, as the
post-hook and ``maintain`` apply it, and the table may be left out (it is found as ``maintain``
finds it). The output says which policy applied.

A fix names what the user can change in the mode they are in: on a table path the command
line's flag (``--allow-short-retention``), with ``--model`` the model's key.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from python_ops.cli.project import ModelPolicy, add_project_arguments, model_policy
from python_ops.delta.table.recorded_retentions import policy_properties
from python_ops.errors import ConfigError, RetentionTooShortError
from python_ops.ops.vacuum.rule.retention import OverrideWords
from python_ops.storage import normalize_location

OP_SETTING = {"vacuum": "vacuum", "cleanup-logs": "cleanup_logs", "optimize": "optimize"}
OVERRIDE_FLAG = "--allow-short-retention"
# how a warning of an allowed short retention names the table (its location) and the flag
FLAG_WORDS = OverrideWords(override=OVERRIDE_FLAG)


@contextmanager
def fix_as_flag() -> Iterator[None]:
    """A refused retention's fix names the command line's flag (a model's key, if named, stays)."""
    try:
        yield
    except RetentionTooShortError as err:
        raise err.attributed(
            model=None,
            how_to_override=f"pass {OVERRIDE_FLAG} to override (allow_short_retention=True from "
            "Python).",
        ) from err


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """The table argument (optional with ``--model``) and the flags that name a dbt model."""
    parser.add_argument(
        "table",
        nargs="?",
        default=None,
        help="table location (path or URI); with --model, default: the model's table",
    )
    parser.add_argument(
        "--model",
        default=None,
        help="apply this dbt model's maintenance_* config (from the project's manifest)",
    )
    add_project_arguments(parser)


def resolve(args: Any) -> tuple[str, ModelPolicy | None]:
    """The table to work on and the ``--model`` policy, if one was named.

    Args:
        args: A path command's arguments.

    Returns:
        (location, policy or None).

    Raises:
        ConfigError: With no table and no ``--model``, for project flags without ``--model``,
            for a model whose maintenance of this op is switched off, or a table that is not
            the model's.
    """
    if args.model is None:
        given = [
            f
            for f in ("project_dir", "profiles_dir", "profile", "target", "warehouse")
            if getattr(args, f, None)
        ]
        if given:
            flag = "--" + given[0].replace("_", "-")
            raise ConfigError(
                setting=given[0],
                value=getattr(args, given[0]),
                fix=f"{flag} only says where to find the model of --model NAME; add --model.",
            )
        if not args.table:
            raise ConfigError(
                setting="table",
                value=None,
                fix="Give the table's location, or --model NAME with --project-dir DIR.",
            )
        return str(args.table), None
    policy = model_policy(args)
    c = policy.config
    op = OP_SETTING[args.op]
    if not c.op_enabled(op):
        raise ConfigError(
            setting=c.switched_off_by(op),
            value=False,
            model=c.model,
            fix=f"The model switches {args.op} off. Run it on the table's path without --model "
            "to do it anyway, or change the model's config.",
        )
    if args.table and normalize_location(args.table) != normalize_location(policy.location):
        raise ConfigError(
            setting="table",
            value=args.table,
            model=c.model,
            fix=f"The model's table is {policy.location} ({policy.places.describe()}). Leave "
            "out the path, or drop --model.",
        )
    return policy.location, policy


def vacuum_options(args: Any, policy: ModelPolicy | None) -> tuple[dict[str, Any], str | None]:
    """VACUUM's retention and mode options: the flags, else the model's; who set the retention.

    Without ``--model`` the mode is ``--mode``, else ``full`` (what VACUUM did before modes).

    Returns:
        (options, words for a retention the model set, or None).
    """
    allow = bool(args.allow_short_retention)
    hours, words = args.retention_hours, None
    mode, interval = args.mode, args.full_interval_days
    if policy is not None:
        c = policy.config
        allow = allow or c.vacuum_allow_short_retention
        if hours is None and c.vacuum_retention_hours is not None:
            hours = c.vacuum_retention_hours
            words = f"maintenance_vacuum_retention_hours of model {c.model}"
        mode = mode or c.vacuum_mode
        interval = c.vacuum_full_interval_days if interval is None else interval
    options: dict[str, Any] = {
        "retention_hours": hours,
        "allow_short_retention": allow,
        "mode": mode or "full",
    }
    if interval is not None:
        options["full_interval_days"] = interval
    return options, words


def cleanup_logs_options(
    args: Any, policy: ModelPolicy | None
) -> tuple[dict[str, Any], str | None]:
    """Log cleanup's retention options: the flags, else the model's; and who set the retention.

    With ``--model`` a real run also records the model's retentions as table properties, as
    the post-hook does.

    Returns:
        (options, words for a retention the model set, or None).
    """
    days, words = args.retention_days, None
    options: dict[str, Any] = {}
    if policy is not None:
        c = policy.config
        if days is None and c.log_retention_days is not None:
            days = c.log_retention_days
            words = f"maintenance_log_retention_days of model {c.model}"
        options["record_policy"] = policy_properties(
            log_retention_days=c.log_retention_days,
            deleted_file_retention_hours=c.vacuum_retention_hours,
            record_short_retention=c.vacuum_record_short_retention,
        )
    options["retention_days"] = days
    return options, words


def optimize_options(args: Any, policy: ModelPolicy | None) -> dict[str, Any]:
    """OPTIMIZE's options: the flags, else the model's Z-order, target size and threshold."""
    columns = [c.strip() for c in args.zorder_by.split(",")] if args.zorder_by else None
    options: dict[str, Any] = {
        "zorder_by": columns,
        "where": args.where,
        "full": args.full,
        "target_size_bytes": args.target_size,
        "min_small_files": args.min_small_files,
        "memory_budget_bytes": args.memory_budget,
    }
    if policy is not None:
        c = policy.config
        if columns is None and c.zorder_by:
            options["zorder_by"] = list(c.zorder_by)
        if args.target_size is None:
            options["target_size_bytes"] = c.target_file_size_bytes
        if args.min_small_files is None:
            options["min_small_files"] = c.min_small_files
        if args.memory_budget is None:
            options["memory_budget_bytes"] = c.memory_budget_bytes
    for name in ("min_small_files", "memory_budget_bytes"):
        if options[name] is None:
            del options[name]  # the op's default
    return options


def retention_words(
    source: str, *, prop: str, model_words: str | None, flag: str, has_model: bool
) -> str:
    """Where a retention came from, for people.

    Args:
        source: The result's ``retention_source`` (``requested``, ``table property``,
            ``default``).
        prop: The table property that would set it.
        model_words: Who set it when a model's config did (``vacuum_options``).
        flag: The command-line flag that sets it.
        has_model: Whether ``--model`` was given.

    Returns:
        E.g. ``the table property delta.deletedFileRetentionDuration``.
    """
    if source == "requested":
        return model_words or flag
    if source == "table property":
        return f"the table property {prop}"
    text = f"Delta's default (the table sets no {prop})"
    if not has_model:
        text += (
            "; a dbt model's maintenance_* retention applies only with --model NAME "
            "--project-dir DIR"
        )
    return text
