"""``python -m python_ops maintain``: ``maintain_all`` for schedulers that do not run dbt.

Reads the models and their resolved maintenance config from ``target/manifest.json``, locates
their tables (``python_ops.maintenance.targets``), runs what is due on the embedded engine with a
progress bar on stderr, records every op in the same history table the dbt side uses and prints
the same per-model table as ``dbt run-operation maintain_all``.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from typing import Any, TextIO

from python_ops.errors import ConfigError
from python_ops.maintenance.history import HistoryStore
from python_ops.maintenance.registry import check_ops
from python_ops.maintenance.runner import Maintainer
from python_ops.maintenance.selection import keep_selected, needs_resolution, resolve_with_dbt
from python_ops.maintenance.targets import (
    default_history_location,
    load_manifest,
    manifest_models,
    targets_from_nodes,
    warehouse_locator,
)

BAR_WIDTH = 30


class ProgressBar:
    """A one-line progress bar (a line per model when the stream is not a terminal).

    Args:
        stream: Where to draw it.
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()

    def __call__(self, done: int, total: int, model: str) -> None:
        """Show that ``done`` of ``total`` models are finished, the last being ``model``."""
        filled = BAR_WIDTH * done // max(total, 1)
        bar = "#" * filled + "." * (BAR_WIDTH - filled)
        line = f"[{bar}] {done}/{total} models  {model}"
        if self.tty:
            end = "\n" if done == total else ""
            self.stream.write(f"\r{line:<{BAR_WIDTH + 60}}{end}")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def run_maintain(args: Any) -> int:
    """Run ``maintain`` for the parsed command line.

    Args:
        args: The ``maintain`` sub-command's arguments (see ``python_ops.cli.main``).

    Returns:
        0 when every op succeeded or only warned, 1 when an op failed on a model with
        ``on_error: fail``.

    Raises:
        ConfigError: For a missing manifest, bad arguments or a bad model setting.
        EngineError: When the embedded engine cannot start.
    """
    if args.threads < 1:
        raise ConfigError(setting="threads", value=args.threads, fix="Use 1 or more.")
    if args.time_budget_s is not None and args.time_budget_s <= 0:
        raise ConfigError(
            setting="time_budget_s", value=args.time_budget_s, fix="Use a number of seconds > 0."
        )
    ops = check_ops([o.strip() for o in args.ops.split(",")] if args.ops else None)
    project_dir = os.path.abspath(args.project_dir)
    warehouse = os.path.abspath(
        args.warehouse
        or os.environ.get("SPARKDELTA_WAREHOUSE")
        or os.path.join(project_dir, "warehouse")
    )
    manifest = load_manifest(project_dir)
    models = manifest_models(manifest)
    targets, _ = targets_from_nodes(models, warehouse_locator(warehouse))
    selector, state = getattr(args, "selector", None), getattr(args, "state", None)
    if needs_resolution(args.select, args.exclude, selector, manifest.get("selectors")):
        selection = resolve_with_dbt(
            project_dir, select=args.select, exclude=args.exclude, selector=selector, state=state
        )
        for warning in selection.warnings:
            print(f"maintain: warning: {warning}", file=sys.stderr)
        chosen = keep_selected(targets, selection.unique_ids)
    else:
        chosen = list(targets)
    history = HistoryStore(args.history_location or default_history_location(warehouse, models))
    print(
        f"maintain: {len(chosen)} of {len(targets)} built models in {warehouse}; "
        f"history at {history.location}",
        file=sys.stderr,
    )

    from python_ops.spark_sessions import SailEngine

    engine = SailEngine()  # VACUUM selects files with the DataFrame API
    try:
        maintainer = Maintainer(
            spark=engine.spark,
            history=history,
            invocation_id=f"cli-{uuid.uuid4()}",
            on_progress=ProgressBar(sys.stderr),
        )
        run = maintainer.maintain(
            chosen,
            ops=ops,
            only_due=not args.all,
            dry_run=args.dry_run,
            retention_hours=args.retention_hours,
            threads=args.threads,
            time_budget_s=args.time_budget_s,
        )
    finally:
        engine.stop()
    print(json.dumps(run.to_dict()) if args.json else run.table())
    return 1 if run.failed else 0
