"""``python -m python_ops maintain``: ``maintain_all`` for schedulers that do not run dbt.

Reads the models and their resolved maintenance config from ``target/manifest.json``, locates
their tables where the profile target put them (``python_ops.cli.project``), runs what is due on
the embedded engine with a progress bar on stderr, records every op in the same history table the
dbt side uses and prints the same per-model table as ``dbt run-operation maintain_all``.

A run that finds nothing to maintain (no table model built where the profile says, or a
selection that keeps none) is refused with exit code 2 and a message saying where it looked: a
scheduler must not report success for a run that did nothing.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TextIO

from typing_extensions import override

from python_ops.cli.project import (
    Places,
    maintained_models,
    node_location,
    resolve_places,
    selected_targets,
)
from python_ops.delta_sql import DeltaSql
from python_ops.errors import ConfigError, MaintenanceError
from python_ops.maintenance.records.history import HistoryStore
from python_ops.maintenance.records.outcomes import Status
from python_ops.maintenance.running.run_results import MaintenanceRun
from python_ops.maintenance.running.session import (
    MaintenanceSession,
    OpsEnvironment,
    SessionEvents,
)
from python_ops.maintenance.runs.auto_columns import AdviceFor, ProjectAdvice
from python_ops.maintenance.runs.run_options import RunOptions
from python_ops.maintenance.selection.locations import default_history_location, warehouse_locator
from python_ops.maintenance.selection.selection_resolver import (
    SelectionResolver,
)
from python_ops.maintenance.selection.targets import (
    ModelTarget,
    load_manifest,
    manifest_models,
    node_config,
    targets_from_nodes,
)
from python_ops.ops.vacuum_modes import VacuumEngine

log = logging.getLogger("python_ops.maintenance.running.runner")  # as the runner logged failures

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


@dataclass(frozen=True)
class CliEnvironment(OpsEnvironment):
    """What the ops run with on the command line (``OpsEnvironment``): the embedded engine.

    Attributes:
        session: The embedded engine's Spark session.
        store: Where runs are recorded.
        advice: The advisor's columns for models with ``auto`` clustering.
    """

    session: Any
    store: HistoryStore
    advice: AdviceFor | None = None

    @override
    def spark(self) -> Any:
        return self.session

    @override
    def delta_sql(self) -> DeltaSql | None:
        return None  # OPTIMIZE through delta-rs in this process

    @override
    def vacuum_engine(self) -> VacuumEngine:
        return VacuumEngine.AUTO

    @override
    def history(self) -> HistoryStore | None:
        return self.store

    @override
    def advice_for(self) -> AdviceFor | None:
        return self.advice


class CliEvents(SessionEvents):
    """Where a session's words go on the command line (``SessionEvents``): the log, stderr."""

    @override
    def warn(self, message: str, target: ModelTarget | None) -> None:
        log.warning("%s", message)

    @override
    def history_ready(self) -> None:
        return None  # the history is a Delta table at its location; no catalog to tell


def run_maintain(args: Any, resolver: SelectionResolver | None = None) -> int:
    """Run ``maintain`` for the parsed command line.

    Args:
        args: The ``maintain`` sub-command's arguments (see ``python_ops.cli.main``).
        resolver: Resolves ``--select``/``--exclude``/``--selector`` with dbt (default: the
            adapter's resolver in a child process).

    Returns:
        0 when every op succeeded (or was not due), 1 when any op failed (after every other op
        ran), whatever the model's ``on_error`` (that setting is about its dbt build).

    Raises:
        ConfigError: For a missing manifest, bad arguments or a bad model setting, a bad
            profile, no built table model where the profile puts them, or a selection that
            keeps none (all exit code 2).
        EngineError: When the embedded engine cannot start.
    """
    options = RunOptions.checked(
        ops=[o.strip() for o in args.ops.split(",")] if args.ops else None,
        only_due=not args.all,
        dry_run=args.dry_run,
        retention_hours=args.retention_hours,
        threads=args.threads,
        time_budget_s=args.time_budget_s,
    )
    places = resolve_places(args)
    project_dir = places.project_dir
    manifest = load_manifest(project_dir)
    models = manifest_models(manifest)
    locate = warehouse_locator(places.warehouse, location_root=places.location_root)
    refused: dict[str, str] = {}
    targets, _ = targets_from_nodes(models, locate, refused=refused)
    _report_refused(refused, nothing_else=not targets)
    _check_found(targets, models, places, refused)
    chosen = selected_targets(args, project_dir, manifest, targets, resolver, command="maintain")
    history = HistoryStore(
        args.history_location
        or default_history_location(places.warehouse, models, location_root=places.location_root)
    )
    print(
        f"maintain: {len(chosen)} of {len(targets)} built table models, {places.describe()}; "
        f"history at {history.location}"
        + (" (dry run: nothing is changed)" if args.dry_run else ""),
        file=sys.stderr,
    )

    def table_location(node: Mapping[str, Any]) -> str | None:
        name = str(node.get("alias") or node.get("name"))
        return locate(str(node.get("schema")), name, node_config(node))

    advice = ProjectAdvice(manifest, project_dir, table_location)
    run = _run_session(args, chosen, options, history, advice)
    try:  # rows kept for the command's end (VACUUM's due-check bounds): one commit
        history.flush()
    except MaintenanceError as err:  # the ops' runs stand; say what was not recorded
        print(f"warning: maintenance history: {err}", file=sys.stderr)
    print(json.dumps(run.to_dict()) if args.json else run.table())
    failed = any(o.status is Status.FAILED for o in run.outcomes)
    if refused:
        print(
            f"maintain: {len(refused)} model(s) refused for their maintenance config "
            f"({', '.join(sorted(refused))}); the others were maintained",
            file=sys.stderr,
        )
    return 1 if failed or refused else 0


def _run_session(
    args: Any,
    chosen: list[ModelTarget],
    options: RunOptions,
    history: HistoryStore,
    advice: ProjectAdvice,
) -> MaintenanceRun:
    """Maintain ``chosen`` in one session on the embedded engine, stopped at the end."""
    from python_ops.spark_sessions import SailEngine

    engine = SailEngine()  # VACUUM selects files with the DataFrame API
    try:
        session = MaintenanceSession(
            args.invocation, CliEnvironment(engine.spark, history, advice), CliEvents()
        )
        return session.maintain(chosen, options, on_progress=ProgressBar(sys.stderr))
    finally:
        engine.stop()


def _report_refused(refused: dict[str, str], *, nothing_else: bool) -> None:
    """Name every model refused for its config on stderr; refuse the run when none is left.

    Raises:
        ConfigErrors: When every maintained model was refused (nothing ran: exit 2).
    """
    for name in sorted(refused):
        print(f"maintain: model '{name}' refused: {refused[name]}", file=sys.stderr)
    if refused and nothing_else:
        raise ConfigError(
            setting="config",
            value=", ".join(sorted(refused)),
            fix="Every model with a table has a bad maintenance setting (each named above with "
            "its fix); nothing was run.",
        )


def _check_found(
    targets: list[ModelTarget],
    models: list[dict[str, Any]],
    places: Places,
    refused: dict[str, str] | None = None,
) -> None:
    """Refuse a run that found no table; name the models not built yet on stderr.

    Raises:
        ConfigError: When the manifest has no table model, or none has a Delta table where
            ``places`` put them.
    """
    wanted = maintained_models(models)
    built = {t.unique_id for t in targets}
    missing = [
        m
        for m in wanted
        if m.get("unique_id") not in built and str(m.get("name")) not in (refused or {})
    ]
    if not wanted:
        raise ConfigError(
            setting="project_dir",
            value=places.project_dir,
            fix="Its manifest has no enabled table or incremental model, so there is no Delta "
            "table to maintain; nothing was run.",
        )
    if not targets:
        looked = ", ".join(node_location(m, places) for m in wanted[:3])
        raise ConfigError(
            setting="warehouse",
            value=places.location_root or places.warehouse,
            fix=f"None of the {len(wanted)} table models of the manifest has a Delta table where "
            f"{places.source} puts them (looked at {looked}"
            f"{', ...' if len(wanted) > 3 else ''}); nothing was run. Build them first "
            "(dbt build), or say where dbt put them: --profiles-dir, --profile, --target as "
            "for dbt, or --warehouse.",
        )
    if missing:
        names = ", ".join(str(m.get("name")) for m in missing)
        print(f"maintain: not built yet (no Delta table): {names}", file=sys.stderr)
