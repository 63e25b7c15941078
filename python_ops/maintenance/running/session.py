"""One maintenance session: the sequence every front end runs, written once.

dbt's post-hook (one model, what is due), its run-operations (``vacuum_all``... many models on
threads within a time budget), its one-table macros, and ``python -m python_ops maintain`` all
run the same steps in the same order:

1. the command it runs in (``python_ops.invocation``: a warning's "once" is per dbt invocation
   or CLI run, and so is the history's upkeep), given by the front end;
2. the maintainer, with what the front end supplies (``OpsEnvironment``: the Spark session,
   where Delta's SQL runs, where VACUUM selects, the history store); a refusal there is a
   setup failure, which a post-hook under ``on_error: warn`` turns into a warning;
3. maintain;
4. tell the front end the history may have rows (dbt registers it in its catalog);
5. the history's own upkeep (``history_upkeep``), after a run that wrote to it;
6. every failed op of a model with ``on_error: warn`` as a warning.

The front ends only translate: the adapter turns dbt nodes into targets before, and errors into
dbt errors and warnings into dbt events after; the CLI prints them on stderr.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol

from python_ops.delta.log.commits import commits_shared
from python_ops.delta.writing.local_writer import starts_deferred
from python_ops.delta_sql import DeltaSql
from python_ops.errors import MaintenanceError
from python_ops.invocation import Invocation
from python_ops.maintenance.configuration.config import MaintenanceConfig
from python_ops.maintenance.decisions.build_decisions import decide_from_build
from python_ops.maintenance.decisions.due import Decision
from python_ops.maintenance.facts.build_writes import BuildFacts, BuildWrites, read_build_writes
from python_ops.maintenance.records.history import HistoryStore
from python_ops.maintenance.records.outcomes import Status
from python_ops.maintenance.running.build_skip import record_skip
from python_ops.maintenance.running.history_upkeep import upkeep_history
from python_ops.maintenance.running.run_results import MaintenanceRun, OpOutcome, not_due_outcomes
from python_ops.maintenance.running.runner import Maintainer
from python_ops.maintenance.runs.auto_columns import AdviceFor
from python_ops.maintenance.runs.registry import OPS, op_spec
from python_ops.maintenance.runs.run_options import RunOptions
from python_ops.maintenance.selection.targets import ModelTarget
from python_ops.ops.vacuum_modes import VacuumEngine
from python_ops.storage import Storage, open_storage

#: Why a post-hook deferred an op that would start Delta's local writer (a JVM).
POST_HOOK_DEFERRAL = (
    "needs Delta's own writer, which would start a JVM (a local Spark); a post-hook does not "
    "start one unless the model sets maintenance_post_hook_jvm: true. Still due: the next "
    "maintain_all (or the CLI) runs it"
)

ModelDone = Callable[[int, int, str, list[OpOutcome]], None]
ModelCount = Callable[[int, int, str], None]


class OpsEnvironment(Protocol):
    """What the ops run with, as a front end supplies it (dbt: its connection; CLI: Sail).

    Each method may refuse with a ``MaintenanceError`` (no place for the history, no engine):
    the session treats that as a failure to start.
    """

    def spark(self) -> Any:
        """The Spark session the ops use (VACUUM's selection, writes through Delta)."""

    def delta_sql(self) -> DeltaSql | None:
        """Where Delta's own SQL runs (OPTIMIZE goes there when it has Delta); None: delta-rs."""

    def vacuum_engine(self) -> VacuumEngine:
        """Where VACUUM's selection runs."""

    def history(self) -> HistoryStore | None:
        """Where runs are recorded; None records nothing."""

    def advice_for(self) -> AdviceFor | None:
        """The advisor's columns for models with ``auto`` clustering; None: no advisor."""


class SessionEvents(Protocol):
    """What a front end does with what a session tells it."""

    def warn(self, message: str, target: ModelTarget | None) -> None:
        """Show a warning (dbt: a warning event on the model's node; the CLI: stderr).

        Args:
            message: The whole sentence.
            target: The model it concerns (None: the history's own upkeep).
        """

    def history_ready(self) -> None:
        """The history table may have rows now (dbt registers it in its catalog)."""


@dataclass(frozen=True)
class ModelMaintenance:
    """What a session did for one model (the post-hook's case).

    Attributes:
        decided: The outcome of each op decided one by one, from the table's snapshot, and
            run when due (empty when maintenance could not start, or when the build's own
            facts proved nothing due: ``nothing_due``).
        started: False when maintenance could not start (a warning said why).
        build: What the model's build wrote (None: not known).
        skipped: Why the post-hook maintained nothing after this build ('' : it decided).
        nothing_due: Every op's decision, none of them due, when the build's own facts proved
            it (``build_decisions``); nothing ran.
        target: The model those decisions are of.
    """

    decided: tuple[OpOutcome, ...]
    started: bool = True
    build: BuildWrites | None = None
    skipped: str = ""
    nothing_due: tuple[Decision, ...] = ()
    target: ModelTarget | None = None

    @cached_property
    def outcomes(self) -> tuple[OpOutcome, ...]:
        """One per op considered: ``decided``, or the not-due outcomes of ``nothing_due``.

        Made when first asked for: a post-hook asks only ``failed`` and ``summary``, which an
        op that did not run is in neither of.
        """
        if self.nothing_due and self.target is not None:
            return tuple(not_due_outcomes(self.target, self.nothing_due))
        return self.decided

    @property
    def failed(self) -> tuple[OpOutcome, ...]:
        """The ops that ran and failed."""
        return tuple(o for o in self.decided if o.status is Status.FAILED)

    def summary(self) -> str:
        """One line: each op that ran, what it did and how long it took ('' when none ran)."""
        if not self.started:
            return "not run: maintenance could not start (see the warning)"
        if self.skipped:
            return f"skipped: the build {self.skipped}"
        return ", ".join(
            f"{o.op} {o.summary} in {o.duration_s:.1f} s" for o in self.decided if o.ran
        )


def may_maintain(config: MaintenanceConfig) -> bool:
    """Whether any op may run for a model (maintenance on, and an op enabled).

    Args:
        config: The model's maintenance config.
    """
    return any(config.op_enabled(op) for op in OPS)


def failure_warnings(outcomes: Iterable[OpOutcome], *, after_build: bool) -> list[str]:
    """One sentence per failed op of a model with ``on_error: warn``, with its reason.

    Args:
        outcomes: The ops that ran.
        after_build: A post-hook's failure (the model's build stands); a run-operation's
            failure fails the run-operation instead, so it says nothing of the model's build.

    Returns:
        The warnings, in the outcomes' order.
    """
    why = " (on_error: warn, so the model itself succeeded)" if after_build else ""
    return [
        f"maintenance {o.op} of model {o.model} failed{why}: {o.detail}"
        for o in outcomes
        if o.status is Status.FAILED and o.on_error != "fail"
    ]


class MaintenanceSession:
    """Runs maintenance for one command (a dbt invocation, a CLI run).

    Args:
        invocation: The command: its id is recorded with every run in the history; what it
            remembers (warnings given, the history's upkeep) spans every session of the command
            (dbt's post-hooks each make one).
        environment: What the ops run with.
        events: Where warnings and the history's readiness go.
    """

    def __init__(
        self, invocation: Invocation, environment: OpsEnvironment, events: SessionEvents
    ) -> None:
        self.invocation = invocation
        self._environment = environment
        self._events = events

    def _maintainer(
        self,
        on_model: ModelDone | None = None,
        on_progress: ModelCount | None = None,
        build: BuildWrites | None = None,
        after_build: bool = False,
    ) -> Maintainer:
        env = self._environment
        return Maintainer(
            build=build,
            trust_listing_bounds=after_build,  # the post-hook's: not a listing per build
            spark=env.spark(),
            sql=env.delta_sql(),
            vacuum_engine=env.vacuum_engine(),
            history=env.history(),
            invocation=self.invocation,
            on_model=on_model,
            on_progress=on_progress,
            log_failures=False,  # the session warns, through the front end's events
            advice_for=env.advice_for(),
        )

    def maintain_model(
        self, target: ModelTarget, *, build: BuildFacts | None = None
    ) -> ModelMaintenance:
        """What is due for one model just built (dbt's post-hook).

        With ``build``, the build's own commits decide first (``build_writes``): a build that
        wrote fewer files than ``maintenance_min_files_written`` skips maintenance (one
        ``post_hook`` history row, status ``skipped``, says why), and OPTIMIZE is decided for
        the partitions it wrote only. A log that cannot be read that way decides as without.
        The build's commits are read once: the build's writes, the snapshot and the decisions
        share them (``commits_shared``).

        Args:
            target: The model.
            build: What the front end recorded when the build started (None: not known).

        Returns:
            What ran; failed ops of an ``on_error: warn`` model were warned about.

        Raises:
            MaintenanceError: When maintenance cannot start and the model says
                ``on_error: fail`` (a failed op is in the result, for the caller to judge).
        """
        with commits_shared():
            return self._maintain_model(target, build=build)

    def _maintain_model(
        self, target: ModelTarget, *, build: BuildFacts | None = None
    ) -> ModelMaintenance:
        """``maintain_model`` inside the shared-commits block."""
        writes, storage = None, None
        if build is not None and may_maintain(target.config):
            try:
                storage = open_storage(target.location)
                writes = read_build_writes(storage, build)
            except MaintenanceError:
                writes = None  # the ops read the log themselves and report what is wrong
        skipped = writes.skip_reason(target.config.min_files_written) if writes else None
        if writes is not None and storage is not None and not skipped:
            target = target.scoped(writes.scope())
            quick = self._decided_from_build(target, writes, storage)
            if quick is not None:  # nothing due: neither the snapshot nor an engine was needed
                return ModelMaintenance((), build=writes, nothing_due=tuple(quick), target=target)
        try:
            maintainer = self._maintainer(build=writes, after_build=True)
        except MaintenanceError as err:
            # e.g. no place for the history: a setup problem of maintenance, not of the model,
            # so on_error decides as for a failed op
            if target.config.on_error == "fail":
                raise
            self._events.warn(
                f"maintenance of model {target.config.model} did not run (on_error: warn, so "
                f"the model itself succeeded): {err}",
                target,
            )
            return ModelMaintenance((), started=False)
        if writes is not None and skipped:
            outcome = record_skip(maintainer, target, writes, skipped)
            return ModelMaintenance((outcome,), build=writes, skipped=skipped)
        with starts_deferred(None if target.config.post_hook_jvm else POST_HOOK_DEFERRAL):
            outcomes = maintainer.maintain_model(target)
        if any(o.ran for o in outcomes):
            self._events.history_ready()
            maintainer.build = None  # the history's own upkeep is no part of the model's build
            self._upkeep(maintainer)
        for message in failure_warnings(outcomes, after_build=True):
            self._events.warn(message, target)
        return ModelMaintenance(tuple(outcomes), build=writes)

    def _decided_from_build(
        self, target: ModelTarget, writes: BuildWrites, storage: Storage
    ) -> list[Decision] | None:
        """Every op's decision when the build's facts prove none is due (``build_decisions``).

        None: something may be due, or a fact is missing; the maintainer then reads the
        snapshot. A history that cannot be opened is the maintainer's to report.
        """
        try:
            history = self._environment.history()
            return decide_from_build(
                target,
                writes,
                storage=storage,
                history=history,
                invocation=self.invocation,
                now_ms=time.time_ns() // 1_000_000,
            )
        except MaintenanceError:
            return None

    def maintain(
        self,
        targets: Sequence[ModelTarget],
        options: RunOptions,
        *,
        on_model: ModelDone | None = None,
        on_progress: ModelCount | None = None,
    ) -> MaintenanceRun:
        """Maintain many models (the run-operations, the CLI's ``maintain``).

        The history is made ready even when nothing ran (a new session's catalog lists it for
        ``source('maintenance', ...)``); its upkeep follows a real run that wrote to it.

        Args:
            targets: The models.
            options: What to run and how (validated when built).
            on_model: Called after each model with its outcomes (progress lines).
            on_progress: Called after each model with the counts (a progress bar).

        Returns:
            The run; failed ops of ``on_error: warn`` models were warned about.

        Raises:
            MaintenanceError: When maintenance cannot start, or for a retention argument below
                some table's minimum (before any model).
        """
        maintainer = self._maintainer(on_model=on_model, on_progress=on_progress)
        run = maintainer.maintain(targets, options)
        self._events.history_ready()
        if not options.dry_run and any(o.ran for o in run.outcomes):
            self._upkeep(maintainer)
        for message in failure_warnings(run.outcomes, after_build=False):
            self._events.warn(message, None)
        return run

    def run_table_op(
        self, op: str, location: str, *, name: str | None, options: Mapping[str, Any]
    ) -> Any:
        """One registered op on one table with the caller's keyword options (dbt's macros).

        Args:
            op: The op's registry name (``vacuum``, ``optimize``, ``cleanup_logs``...).
            location: The table.
            name: What the table is called in messages (the relation, the model).
            options: The op's keyword arguments.

        Returns:
            The op's result.

        Raises:
            MaintenanceError: When the op is unknown, refuses or fails.
        """
        spec = op_spec(op)
        env = self._environment
        chosen = dict(options)
        if op == "vacuum":
            chosen = {"engine": env.vacuum_engine(), **chosen}
        return spec.invoke(
            location,
            spark=env.spark() if spec.needs_spark else None,
            sql=env.delta_sql() if spec.takes_sql else None,
            model=name,
            invocation=self.invocation,
            **chosen,
        )

    def _upkeep(self, maintainer: Maintainer) -> None:
        """The history's own schedule; its failures are warnings, the models' runs stand."""
        for message in failure_warnings(upkeep_history(maintainer), after_build=False):
            self._events.warn(message, None)
