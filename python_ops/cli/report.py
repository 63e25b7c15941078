"""``python -m python_ops report``: ``dbt run-operation maintenance_report`` without dbt.

Reads the models from ``target/manifest.json`` and their tables where the profile target put
them (as ``maintain``), and prints the same per-model table; ``--html FILE`` writes the history as
pictures instead: one self-contained page (``report_page``), nothing fetched when it opens.
Nothing is changed and no engine is started: VACUUM's dry run lists in this process.

A model whose table could not be read is on the page and in the table with why, and the
command then exits 1 (as the run-operation fails) after everything else was reported.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from python_ops.cli.project import resolve_places, selected_targets
from python_ops.maintenance.records.history import HistoryStore
from python_ops.maintenance.running.report import render_report, report_rows
from python_ops.maintenance.running.report_page import page_data, write_page
from python_ops.maintenance.selection.locations import default_history_location, warehouse_locator
from python_ops.maintenance.selection.selection_resolver import (
    SelectionResolver,
)
from python_ops.maintenance.selection.targets import (
    load_manifest,
    manifest_models,
    targets_from_nodes,
)


def run_report(args: Any, resolver: SelectionResolver | None = None) -> int:
    """Run ``report`` for the parsed command line.

    Args:
        args: The ``report`` sub-command's arguments (see ``python_ops.cli.arguments``).
        resolver: Resolves ``--select``/``--exclude``/``--selector`` with dbt (default: the
            adapter's resolver in a child process).

    Returns:
        0, or 1 when a model's config was refused or its table could not be read.

    Raises:
        ConfigError: For a missing manifest, a bad profile, or a selection that keeps none of
            the built table models (exit 2).
    """
    places = resolve_places(args)
    manifest = load_manifest(places.project_dir)
    models = manifest_models(manifest)
    locate = warehouse_locator(places.warehouse, location_root=places.location_root)
    refused: dict[str, str] = {}
    targets, _ = targets_from_nodes(models, locate, refused=refused)
    chosen = selected_targets(
        args, places.project_dir, manifest, targets, resolver, command="report"
    )
    history = HistoryStore(
        args.history_location
        or default_history_location(places.warehouse, models, location_root=places.location_root)
    )
    rows = report_rows(chosen, spark=None, history=history, invocation=args.invocation)
    if args.html:
        data = page_data(rows, history.records(), {t.name: t.location for t in chosen})
        written = write_page(args.html, data)
        print(f"report: {len(rows)} model(s) written to {written}", file=sys.stderr)
    elif args.json:
        print(json.dumps(rows, default=str))
    else:
        print(render_report(rows))
    problems = [f"{name}: {why}" for name, why in sorted(refused.items())]
    problems += [f"{r['model']}: {r['error']}" for r in rows if r.get("error")]
    for line in problems:
        print(f"report: could not report {line}", file=sys.stderr)
    return 1 if problems else 0
