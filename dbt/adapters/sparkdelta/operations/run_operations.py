"""Maintenance across models: the post-hook and the run-operations (``vacuum_all``...).

The macros resolve the selection and pass the chosen nodes; this object translates: it locates
their tables (nodes to targets), runs a ``python_ops.maintenance.MaintenanceSession`` with dbt's
environment and events (``dbt_session``), and turns maintenance's errors into dbt's.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dbt.adapters.spark.impl import SparkAdapter
from dbt_common.exceptions import DbtRuntimeError
from dbt_common.invocation import get_invocation_id

from dbt.adapters.sparkdelta.bridge.dbt_connection import DbtConnection
from dbt.adapters.sparkdelta.bridge.dbt_session import dbt_session
from dbt.adapters.sparkdelta.bridge.history_catalog import HistoryCatalog
from dbt.adapters.sparkdelta.bridge.locator import TableLocator
from dbt.adapters.sparkdelta.common import maintenance_events
from dbt.adapters.sparkdelta.operations.advisor_bridge import ProjectAdvisor
from dbt.adapters.sparkdelta.operations.build_clock import BuildClock, StartedBuild
from python_ops.errors import MaintenanceError
from python_ops.maintenance import (
    Invocation,
    Invocations,
    OpOutcome,
    RunOptions,
    commits_shared,
    holds_first_commit,
    node_value,
    page_data,
    render_report,
    report_rows,
    write_page,
)

# the history's {schema, name, location}, or the maintenance_history macro that gives it
HistoryNode = Mapping[str, Any] | Callable[[], Mapping[str, Any]]
HOOK_TIMES = "post-hook times"  # the invocation's memo: (model, wall ms, thread CPU ms) per hook


@dataclass(frozen=True)
class CommandEnd:
    """What the post-hooks left for their command's end, done then: their cost too.

    Attributes:
        rows: History rows the hooks kept, written now (``flush_histories``).
        wall_s: The wall seconds it took.
        cpu_s: Its thread CPU seconds.
    """

    rows: int
    wall_s: float
    cpu_s: float

    def text(self) -> str:
        """The part of the hooks' line that says it ('' when nothing was done)."""
        if not self.rows:
            return ""
        return (
            f" (of which at the command's end the {self.rows} history row(s) written: wall ms "
            f"{self.wall_s * 1000:.1f}, thread CPU ms {self.cpu_s * 1000:.1f})"
        )


def hook_times_line(times: list[tuple[str, float, float]], end: CommandEnd | None = None) -> str:
    """The command's post-hooks' own times as one line (totals, medians, slowest, per model).

    Args:
        times: (model, wall ms, thread CPU ms) per hook, in the order they ended.
        end: What the hooks left for the command's end, done then: counted in the totals,
            as the hooks' cost.
    """
    walls = sorted(t[1] for t in times)
    cpus = sorted(t[2] for t in times)
    middle = len(times) // 2
    each = ", ".join(f"{name} {wall:.2f}/{cpu:.2f}" for name, wall, cpu in times)
    end_wall, end_cpu = (end.wall_s, end.cpu_s) if end else (0.0, 0.0)
    return (
        f"maintenance post-hooks: {len(times)} hooks; wall ms total "
        f"{sum(walls) + end_wall * 1000:.1f} median {walls[middle]:.2f} max {walls[-1]:.2f}; "
        f"thread CPU ms total {sum(cpus) + end_cpu * 1000:.1f} median {cpus[middle]:.2f} max "
        f"{cpus[-1]:.2f}{end.text() if end else ''}; per model (wall/CPU ms): {each}"
    )


def _logged(build: StartedBuild | None) -> set[str]:
    """Where the build's table is known to hold a Delta log, without asking whether it does.

    A log the start listed a commit in; or, where the start found nothing, the first commit
    the build wrote (read once: the build's writes are read from the same shared commits).
    """
    if build is None or not build.location:
        return set()
    if build.version_before is not None:
        return {build.location}
    if build.location_was_empty and holds_first_commit(build.location):
        return {build.location}
    return set()


class RunOperations:
    """The post-hook and the run-operations over a set of models.

    Args:
        adapter: The dbt adapter (for the manifest and the project's paths).
        connection: Its connection, as the bridge uses it.
        locator: Where tables are.
        history: The history table's store and registration.
        invocations: The current dbt invocation's memory.
    """

    def __init__(
        self,
        adapter: SparkAdapter,
        connection: DbtConnection,
        locator: TableLocator,
        history: HistoryCatalog,
        invocations: Invocations,
    ) -> None:
        self._invocations = invocations
        self._adapter = adapter
        self._connection = connection
        self._locator = locator
        self._history = history
        self.build_clock = BuildClock(locator)

    def after_build(self, model: Any, invocation_id: str, history: HistoryNode) -> str:
        """Post-hook: run the maintenance that is due for the model just built.

        Its own time, with what recording the build's start took (``build_clock``), is kept
        for the command's one line in ``logs/dbt.log`` (debug level, ``report_hook_times``):
        what maintenance added to the model's build, whatever else the process was doing
        (``bench/posthook_bench.py`` and ``bench/fleet_bench.py`` read it).

        Args:
            model: The model node.
            invocation_id: dbt's invocation id.
            history: The ``maintenance_history()`` mapping, or the macro itself (the post-hook
                passes it uncalled: called once per invocation and package, not per model).

        Returns:
            A one-line summary ('' when nothing ran).

        Raises:
            DbtRuntimeError: For a bad setting, or a failed op with ``on_error: fail``.
        """
        started, cpu = time.perf_counter(), time.thread_time()
        build = self.build_clock.take(model)  # when its materialization started, and the version
        invocation = self._invocations.get(invocation_id)  # every hook of one dbt invocation: one
        try:
            node = self._history_node(model, invocation, history)
            with commits_shared():  # a commit read to locate the table is not read again
                return self._after_build(model, build, invocation, node)
        finally:
            name = node_value(model, "name", "")
            hooks: list[tuple[str, float, float]] = invocation.memo(HOOK_TIMES).setdefault(
                "each", []
            )  # one append per model (atomic), no event per model
            wall_s = time.perf_counter() - started + (build.own_wall_s if build else 0.0)
            cpu_s = time.thread_time() - cpu + (build.own_cpu_s if build else 0.0)
            hooks.append((str(name), wall_s * 1000, cpu_s * 1000))

    def _history_node(
        self, model: Any, invocation: Invocation, history: HistoryNode
    ) -> Mapping[str, Any]:
        """The history's ``{schema, name, location}``, the macro called once per invocation.

        Its vars are the project's (or, for a package's model, the package's), the same for
        every model of one package in one invocation.
        """
        if not callable(history):
            return history
        package = node_value(model, "package_name", "")
        # once, though the first hooks of a build end together, on every thread
        return invocation.once("history nodes", package, lambda: dict(history()))

    def report_hook_times(self, end: CommandEnd | None = None) -> None:
        """The command ends: one debug line with every post-hook's own time, if any ran.

        One dbt event per command, not one per model (an event costs the hook's thread about
        as much as a hook with nothing due).

        Args:
            end: What the hooks left for the command's end (history rows, tables' looks),
                done then: their cost, in the totals.
        """
        hooks = self._invocations.get(get_invocation_id()).memo(HOOK_TIMES).pop("each", None)
        if hooks:
            maintenance_events.debug(hook_times_line(hooks, end))

    def _after_build(
        self,
        model: Any,
        build: StartedBuild | None,
        invocation: Invocation,
        history: Mapping[str, Any],
    ) -> str:
        # the config the materialization's check parsed, not parsed again
        parsed = {build.unique_id: build.config} if build else None
        targets, located = self._locator.locate([model], parsed=parsed, logged=_logged(build))
        if located.refused:  # the model's own config: its build fails, as its check would
            raise DbtRuntimeError(next(iter(located.refused.values())))
        if not targets:
            reasons = list(located.not_delta.values())
            return f"skipped: {reasons[0]}" if reasons else ""
        target = targets[0]
        session = dbt_session(
            invocation,
            self._connection,
            self._history,
            history,
            names=located.names,
            node=model,
            advice=ProjectAdvisor(self._adapter, self._locator).advice_for(),
        )
        # python_ops' logs go to dbt's events until the command ends (not entered per model)
        maintenance_events.hold_python_ops_logs()
        try:
            done = session.maintain_model(
                target, build=build.facts(target.location) if build else None
            )
        except MaintenanceError as err:  # could not start, and the model says on_error: fail
            raise DbtRuntimeError(str(err)) from err
        if target.config.on_error == "fail" and done.failed:
            raise DbtRuntimeError(
                "; ".join(
                    f"maintenance {o.op} of {o.model} failed: {o.detail}" for o in done.failed
                )
            )
        return done.summary()

    def selection(
        self, select: Any = None, exclude: Any = None, selector: Any = None, state: Any = None
    ) -> dict[str, Any]:
        """Resolve a dbt selection with dbt's selector on this invocation's manifest.

        Returns:
            ``{unique_ids: [...] or None (everything), warnings: [...], selector}``.

        Raises:
            DbtRuntimeError: For a selection dbt rejects, or no manifest to select from.
        """
        from dbt.contracts.graph.manifest import Manifest
        from dbt.contracts.state import PreviousState

        from dbt.adapters.sparkdelta.bridge.dbt_selector import select_models

        adapter = self._adapter
        manifest = adapter.get_macro_resolver()
        if not isinstance(manifest, Manifest):
            raise DbtRuntimeError("maintenance selection: dbt's manifest is not loaded")
        previous = None
        if state:
            root = Path(adapter.config.project_root)
            previous = PreviousState(
                state_path=Path(str(state)),
                target_path=root / adapter.config.target_path,
                project_root=root,
            )
        selection = select_models(
            manifest,
            select=select,
            exclude=exclude,
            selector=str(selector) if selector else None,
            selectors=getattr(adapter.config, "selectors", None),
            previous_state=previous,
        )
        return selection.to_dict()

    def maintain(
        self,
        nodes: list[Any],
        *,
        ops: Any,
        only_due: bool,
        dry_run: bool,
        retention_hours: float | None,
        threads: Any,
        time_budget_s: float | None,
        invocation_id: str,
        history: Mapping[str, Any],
    ) -> dict[str, Any]:
        """Run ops on the given models (``vacuum_all`` and its siblings, after the selection).

        Returns:
            The run as a dict, plus ``table`` (the printed per-model table).

        Raises:
            DbtRuntimeError: For bad arguments or settings.
        """
        try:
            options = RunOptions.checked(
                ops=ops,
                only_due=only_due,
                dry_run=dry_run,
                retention_hours=retention_hours,
                threads=threads,
                time_budget_s=time_budget_s,
            )
        except MaintenanceError as err:
            raise DbtRuntimeError(str(err)) from err
        invocation = self._invocations.get(invocation_id or get_invocation_id())
        targets, located = self._locator.locate(nodes)
        label = options.ops[0] if len(options.ops) == 1 else "maintenance"

        def progress(done: int, total: int, name: str, outcomes: list[OpOutcome]) -> None:
            did = [f"{o.op} {o.summary}" for o in outcomes if o.ran]
            idle = [o for o in outcomes if not o.ran]
            words = "; ".join(did) or (idle[0].detail if idle else "nothing to do")
            maintenance_events.info(f"{label} {done}/{total} {name}: {words}")

        if targets:
            dry = " (dry run: nothing is deleted or written)" if dry_run else ""
            maintenance_events.info(
                f"{label}: {len(targets)} model(s) on {options.threads} thread(s){dry}"
            )
        session = dbt_session(
            invocation,
            self._connection,
            self._history,
            history,
            names=located.names,
            advice=ProjectAdvisor(self._adapter, self._locator).advice_for(),
        )
        try:
            with maintenance_events.python_ops_logs_to_dbt():
                run = session.maintain(targets, options, on_model=progress)
        except MaintenanceError as err:  # a bad argument, refused before any op ran
            raise DbtRuntimeError(str(err)) from err
        return {
            **run.to_dict(),
            "table": run.table() + located.lines(28),
            "not_delta": dict(located.not_delta),
            "not_built": dict(located.not_built),
            "config_refused": dict(located.refused),
        }

    def report(self, nodes: list[Any], history: Mapping[str, Any]) -> str:
        """Per model: health, reclaimable bytes, last run of each op; as a printed table."""
        return str(self.report_run(nodes, history)["text"])

    def report_run(
        self, nodes: list[Any], history: Mapping[str, Any], html: Any = None
    ) -> dict[str, Any]:
        """The report's text, and the models it could not report (refused, unreadable).

        Args:
            nodes: The selected model nodes.
            history: The history's node (``maintenance_history``).
            html: A file to write the history as charts to (``report_page``), instead of the
                table; relative to the directory dbt runs in. None: the table.

        Returns:
            ``text`` (the printed table, or the line naming the page written) and ``problems``
            (one line per model whose config was refused or whose row could not be read; the
            report then fails, exit 1).

        Raises:
            DbtRuntimeError: When ``html`` is not a file name.
        """
        if html is not None and (not isinstance(html, str) or not html.strip()):
            raise DbtRuntimeError(
                f"maintenance_report: html must be a file to write, e.g. "
                f"'{{html: maintenance.html}}', got {html!r}"
            )
        chosen, located = self._locator.locate(nodes)
        store = self._history.store(history)
        with maintenance_events.python_ops_logs_to_dbt():  # its warnings as dbt's, not bare
            rows = report_rows(
                chosen,
                spark=self._connection.ops_spark(),
                history=store,
                vacuum_engine=self._connection.vacuum_engine(),
                invocation=self._invocations.get(get_invocation_id()),
            )
        problems = [f"{name}: {reason}" for name, reason in sorted(located.refused.items())]
        problems += [f"{r['model']}: {r['error']}" for r in rows if r.get("error")]
        if html is None:
            return {"text": render_report(rows) + located.lines(26), "problems": problems}
        data = page_data(rows, store.records(), {t.name: t.location for t in chosen})
        try:
            written = write_page(os.path.abspath(html), data)
        except MaintenanceError as err:
            raise DbtRuntimeError(f"maintenance_report: {err}") from err
        text = f"maintenance_report: {len(rows)} model(s) written to {written}"
        return {"text": text + located.lines(26), "problems": problems}
